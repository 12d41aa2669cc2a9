"""Building agents from final transcripts: memory chunks, expert reflections, a persona, embeddings."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

from sqlalchemy import Select, func, select, text, update
from sqlalchemy.orm import Session

from agentbank import deny_list
from agentbank.crypto import Cipher, KeyRing
from agentbank.errors import AgentBankError
from agentbank.memory import CHUNK_WORDS, chunk_turns
from agentbank.models import Agent, Memory, Participant, Transcript
from agentbank.prompting import prompt, prompt_version
from agentbank.providers.chat import ChatModel
from agentbank.providers.embeddings import Embedder
from agentbank.queue import enqueue
from agentbank.reflection import EXPERTS, REFLECTION_MAX_TOKENS, complete_structured, reflect, select_windows
from agentbank.statuses import AgentStatus, ConsentStatus, TranscriptStatus, sources
from agentbank.transcripts import latest_final_transcript, load_turns

PERSONA_SCHEMA = {
    "type": "object",
    "properties": {"persona": {"type": "string", "minLength": 20, "maxLength": 600}},
    "required": ["persona"],
    "additionalProperties": False,
}


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


def _pending(config: BuildConfig) -> Select[Participant]:
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
    return list(session.scalars(_pending(config).order_by(Participant.created_at, Participant.pseudonym)))


# Any constant works; it names the class of per-participant build claims among advisory locks.
BUILD_CLAIM = 0x6275696C  # "buil"


def claim_build(session: Session, participant_id: uuid.UUID, config: BuildConfig) -> bool:
    """Claim a participant's build for the caller's transaction; False when it is not the caller's to do.

    Another build process may hold the claim (it is building the same person now) or may have just
    finished; either way this one moves on, so any number of ``agentbank build`` processes share the
    pending list and nobody is built twice. The claim is a transaction-scoped advisory lock: it ends
    with the transaction, so the participants of a builder that crashed are free again at once.
    """
    held = session.scalar(
        text("SELECT pg_try_advisory_xact_lock(:claims, hashtext(:participant))"),
        {"claims": BUILD_CLAIM, "participant": str(participant_id)},
    )
    if not held:
        return False
    still = session.scalar(_pending(config).where(Participant.id == participant_id).with_only_columns(Participant.id))
    return still is not None


def build_agent(
    session: Session,
    participant: Participant,
    *,
    chat: ChatModel,
    embedder: Embedder,
    keys: KeyRing,
    config: BuildConfig,
    on_step: Callable[[str], None] = lambda _step: None,
) -> Agent:
    """A new active agent version for the participant's newest final transcript.

    Earlier versions become ``superseded``. Nothing is committed here: the caller's transaction
    holds the whole build, so an interrupted build leaves no half-built agent behind.
    """
    transcript = latest_final_transcript(session, participant.id)
    if transcript is None:
        raise AgentBankError(f"participant {participant.pseudonym} has no final transcript")
    cipher = keys.cipher(participant.id, participant.wrapped_key)
    turns = load_turns(session, transcript.id, cipher)
    chunks = chunk_turns(turns, config.chunk_words)

    on_step("embedding the transcript")
    chunk_vectors = embedder.embed([c.text for c in chunks])
    notes, usage = reflect(
        chat,
        select_windows(chunks, config.reflection_word_budget),
        max_tokens=config.reflection_max_tokens,
        on_step=on_step,
    )
    on_step("persona")
    persona_result = complete_structured(
        chat,
        [{"role": "system", "content": _notes_block(notes)}, {"role": "user", "content": prompt("persona")}],
        PERSONA_SCHEMA,
        max_tokens=600,
        seed=0,
    )
    usage += persona_result.usage
    reflections = [(key, note) for key, values in notes.items() for note in values]
    note_vectors = embedder.embed([note for _, note in reflections])

    version = (session.scalar(select(func.max(Agent.version)).where(Agent.participant_id == participant.id)) or 0) + 1
    session.execute(
        update(Agent)
        .where(Agent.participant_id == participant.id, Agent.status.in_(sources(AgentStatus.SUPERSEDED)))
        .values(status=AgentStatus.SUPERSEDED)
    )
    agent = Agent(
        id=uuid.uuid4(),
        participant_id=participant.id,
        version=version,
        transcript_id=transcript.id,
        status=AgentStatus.ACTIVE,
        build={**asdict(config), "fingerprint": config.fingerprint, "usage": asdict(usage)},
        persona_encrypted=cipher.seal(persona_result.data["persona"]),
        # Names the participant mentioned: individual answers that repeat them go to a reviewer.
        deny_list_encrypted=deny_list.seal(
            cipher, deny_list.extract_entities(t.text for t in turns if t.speaker == "participant")
        ),
    )
    session.add(agent)
    session.flush()
    session.add_all(
        Memory(
            agent_id=agent.id,
            kind="chunk",
            position=n,
            first_turn=chunk.first_turn,
            last_turn=chunk.last_turn,
            word_count=chunk.words,
            text_encrypted=cipher.seal(chunk.text),
            embedding=vector,
        )
        for n, (chunk, vector) in enumerate(zip(chunks, chunk_vectors, strict=True))
    )
    session.add_all(
        Memory(
            agent_id=agent.id,
            kind="reflection",
            expert=expert,
            position=n,
            word_count=len(note.split()),
            text_encrypted=cipher.seal(note),
            embedding=vector,
        )
        for n, ((expert, note), vector) in enumerate(zip(reflections, note_vectors, strict=True))
    )
    session.flush()
    return agent


def _notes_block(notes: dict[str, list[str]]) -> str:
    titles = {e.key: e.title for e in EXPERTS}
    parts = [f"## Notes by {titles[key]}\n" + "\n".join(f"- {n}" for n in values) for key, values in notes.items()]
    return "\n\n".join(parts)


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
