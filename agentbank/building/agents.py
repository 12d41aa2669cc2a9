"""Agents: what a build is configured with, who is waiting for one, finding agents, queueing builds.

The build itself (memory chunks, expert reflections, a persona, embeddings) is in ``building``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from agentbank.building.memory import CHUNK_WORDS
from agentbank.building.reflection import REFLECTION_MAX_TOKENS
from agentbank.core.errors import AgentBankError
from agentbank.core.prompts.files import prompt_version
from agentbank.core.statuses import AgentStatus, ConsentStatus, TranscriptStatus
from agentbank.db.models import Agent, Memory, Participant, Transcript
from agentbank.db.queue import enqueue
from agentbank.keys.crypto import Cipher
from agentbank.providers.chat import ChatModel
from agentbank.providers.embeddings import Embedder

# The lightest build a retry falls back to: a few chunks, and enough tokens for five observations.
MIN_WORD_BUDGET = 300
MIN_REFLECTION_TOKENS = 450
LIGHT_WORD_BUDGET = 1500


class AgentNotFoundError(AgentBankError):
    """No active agent answers to the name given."""

    code = "agent_not_found"
    status_code = 404


@dataclass(frozen=True)
class BuildConfig:
    """Everything that changes what a build produces; its fingerprint decides whether to rebuild."""

    chat_model: str
    embedder: str
    prompt_version: str
    reflection_word_budget: int
    chunk_words: int = CHUNK_WORDS
    reflection_max_tokens: int = REFLECTION_MAX_TOKENS

    @property
    def fingerprint(self) -> str:
        """A hash of the configuration."""
        fields = asdict(self)
        if self.reflection_max_tokens == REFLECTION_MAX_TOKENS:
            del fields["reflection_max_tokens"]  # added later: agents built before it keep their fingerprint
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]

    def lighter(self, steps: int = 1) -> BuildConfig:
        """The configuration with each step halving the reflected words and the reflection's token budget.

        A retried build uses it: the same request would take as long as the one that ran out of time.
        The result records its own budgets, so ``agentbank build`` can rebuild it in full later.
        """
        config = self
        for _ in range(steps):
            words = config.reflection_word_budget or LIGHT_WORD_BUDGET * 2
            config = replace(
                config,
                reflection_word_budget=max(MIN_WORD_BUDGET, words // 2),
                reflection_max_tokens=max(MIN_REFLECTION_TOKENS, config.reflection_max_tokens // 2),
            )
        return config

    @classmethod
    def of(cls, chat: ChatModel, embedder: Embedder, reflection_word_budget: int) -> BuildConfig:
        """The configuration of a build with these providers."""
        return cls(chat.name, embedder.name, prompt_version(), reflection_word_budget)


def pending_query(config: BuildConfig) -> Select[Participant]:
    """Consenting participants whose newest final transcript has no active agent of this configuration."""
    latest = (
        select(Transcript.participant_id, func.max(Transcript.version).label("version"))
        .where(Transcript.status == TranscriptStatus.FINAL)
        .group_by(Transcript.participant_id)
        .subquery()
    )
    built = (
        select(Agent.participant_id)
        .join(Transcript, Transcript.id == Agent.transcript_id)
        .join(latest, (latest.c.participant_id == Agent.participant_id) & (latest.c.version == Transcript.version))
        .where(Agent.status == AgentStatus.ACTIVE, Agent.build["fingerprint"].astext == config.fingerprint)
    )
    return (
        select(Participant)
        .join(latest, latest.c.participant_id == Participant.id)
        .where(Participant.consent == ConsentStatus.CONSENTED, Participant.id.not_in(built))
    )


def pending_participants(session: Session, config: BuildConfig) -> list[Participant]:
    """Consenting participants whose newest final transcript has no active agent of this configuration."""
    return list(session.scalars(pending_query(config).order_by(Participant.created_at, Participant.pseudonym)))


def reflections_of(session: Session, agent: Agent, cipher: Cipher, expert: str) -> list[str]:
    """The observations one expert wrote about the agent, in the order written."""
    rows = session.scalars(
        select(Memory.text_encrypted)
        .where(Memory.agent_id == agent.id, Memory.kind == "reflection", Memory.expert == expert)
        .order_by(Memory.position)
    )
    return [cipher.open(blob) for blob in rows]


def active_agents(session: Session) -> list[tuple[Agent, Participant]]:
    """Every active agent with its participant, oldest participant first."""
    rows = session.execute(
        select(Agent, Participant)
        .join(Participant, Participant.id == Agent.participant_id)
        .where(Agent.status == AgentStatus.ACTIVE, Participant.consent == ConsentStatus.CONSENTED)
        .order_by(Participant.created_at, Participant.pseudonym)
    )
    return [(agent, participant) for agent, participant in rows]


def find_agent(session: Session, ref: str) -> tuple[Agent, Participant]:
    """The active agent of a participant pseudonym (``P-1a2b3c4d``) or with this agent id."""
    for agent, participant in active_agents(session):
        if ref in (participant.pseudonym, str(agent.id)):
            return agent, participant
    raise AgentNotFoundError(f"no active agent called {ref!r}", hint="`agentbank survey --agents all` lists them")


BUILD_TASK = "agentbank.build_agent"
BUILD_QUEUE = "builds"


def queue_builds(session: Session, population: dict[str, list[str]] | None = None) -> int:
    """Queue a build for every consenting participant without an active agent.

    ``population`` ({instrument: [items]}) asks the worker to answer those items for the open tier as
    soon as each agent is built.
    """
    built = select(Agent.participant_id).where(Agent.status == AgentStatus.ACTIVE)
    waiting = session.scalars(
        select(Participant.id).where(Participant.consent == ConsentStatus.CONSENTED, Participant.id.not_in(built))
    ).all()
    args = [{"participant_id": str(p), "population": population or {}} for p in waiting]
    enqueue(session, BUILD_QUEUE, BUILD_TASK, args)
    return len(args)
