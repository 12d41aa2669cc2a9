"""Building agents as the bank's processes do it: one build (``run_build``), a worker's queued attempt or a
command's, and a command's builds of everyone pending (``build_pending``).

A queued attempt is lighter on each retry (the same request would run out of time at the same step again),
logs which agent of how many it is on, and keeps why it failed; a command's build reports to its caller
alone. Either way the model calls run outside any transaction (``build.build_now``).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from agentbank.building.agents import BuildConfig, pending_participants
from agentbank.building.build import build_now
from agentbank.building.progress import BuildProgress, build_counts, record_failure
from agentbank.core.errors import ProviderError
from agentbank.core.statuses import AgentStatus, ConsentStatus
from agentbank.db import transaction
from agentbank.db.models import Agent, Participant
from agentbank.keys.crypto import KeyRing
from agentbank.providers.chat import ChatModel
from agentbank.providers.embeddings import Embedder
from agentbank.providers.in_flight import InFlight

# Under the worker's logger, which the worker's console shows (as ``progress`` logs each step).
log = logging.getLogger("agentbank.runtime.worker.builds")


@dataclass(frozen=True)
class Builder:
    """What a build needs of its process: the database, the models, the keys and the calls in flight."""

    sessions: sessionmaker[Session]
    chat: ChatModel
    embedder: Embedder
    keys: KeyRing
    word_budget: int
    in_flight: InFlight | None = None

    def config(self, lighter: int = 0) -> BuildConfig:
        """The build's configuration, ``lighter`` steps lighter (``BuildConfig.lighter``)."""
        return BuildConfig.of(self.chat, self.embedder, self.word_budget).lighter(lighter)


@dataclass(frozen=True)
class Attempt:
    """One attempt of a queued build: its task, the attempts made before it, and how many it may make."""

    task_id: int
    before: int
    attempts: int

    @property
    def last(self) -> bool:
        """Whether the queue retries no more after this one."""
        return self.before + 1 >= self.attempts


# What a queued build does with its agent as part of the attempt (the worker: its open-tier answers); a
# failure there is the attempt's. ``Read``: what that needs to know, read in the attempt's first transaction.
Then = Callable[[uuid.UUID, BuildProgress], None]
Read = Callable[[Session], None]


def run_build(
    builder: Builder, participant_id: uuid.UUID, attempt: Attempt | None = None, *,
    on_step: Callable[[str], None] | None = None, built_before: int = 0, read: Read | None = None,
    then: Then | None = None, stopping: threading.Event | None = None,
) -> uuid.UUID | None:  # fmt: skip
    """Build the participant's agent; its id, or None when it is not this build's to make (withdrawn, or
    built or being built elsewhere).

    A command's build (no ``attempt``) steps through ``on_step`` and raises what failed. A queued attempt
    is lighter on each retry, logs its progress (agent ``built_before`` + 1 of those waiting), and on failure
    logs why and keeps the reason for ``agentbank status``, unless ``stopping`` says it was interrupted: then
    it goes back to the queue as it is."""
    if attempt is None:
        agent = build_now(
            builder.sessions, participant_id, chat=builder.chat, embedder=builder.embedder, keys=builder.keys,
            config=builder.config(), on_step=on_step or _quietly, in_flight=builder.in_flight,
        )  # fmt: skip
        return agent.id if agent is not None else None
    config = builder.config(attempt.before)
    with transaction(builder.sessions) as session:
        participant = session.get_one(Participant, participant_id)
        pseudonym, consent = participant.pseudonym, participant.consent
        waiting = build_counts(session)
        if read is not None:
            read(session)
    if consent != ConsentStatus.CONSENTED:  # withdrew after the build was queued
        log.info("skipped the build of a participant who withdrew")
        return None
    total = built_before + waiting.queued + waiting.running
    progress = BuildProgress(pseudonym, built_before + 1, total, attempt.before, attempt.attempts)
    try:
        agent = build_now(
            builder.sessions, participant_id, chat=builder.chat, embedder=builder.embedder, keys=builder.keys,
            config=config, on_step=progress.step, in_flight=builder.in_flight,
        )  # fmt: skip
        agent_id = agent.id if agent is not None else _active_agent(builder.sessions, participant_id)
        if agent_id is None:  # withdrew during the build, or another builder has the participant now
            log.info("skipped the build of %s: withdrawn, or being built elsewhere", progress.label)
            return None
        if then is not None:
            then(agent_id, progress)
    except Exception as exc:
        if stopping is not None and stopping.is_set():  # interrupted, not failed: it goes back to the queue
            log.info("stopped building %s after %s; it is built again on the next start", progress.label,
                     progress.elapsed())  # fmt: skip
            raise
        progress.failed(exc, None if attempt.last else config.lighter())
        try:
            with transaction(builder.sessions) as session:
                record_failure(session, participant_id, attempt.task_id, attempt.before + 1, exc)
        except SQLAlchemyError:  # the database went away too: the attempt's own error matters more
            log.warning("could not record why the build of %s failed", progress.label)
        raise
    log.info("built %s in %s", progress.label, progress.elapsed())
    return agent_id


def _quietly(_step: str) -> None:
    return None


def _active_agent(sessions: sessionmaker[Session], participant_id: uuid.UUID) -> uuid.UUID | None:
    """The participant's active agent (a retried build that had finished before it failed)."""
    with sessions() as session:
        return session.scalar(
            select(Agent.id).where(Agent.participant_id == participant_id, Agent.status == AgentStatus.ACTIVE)
        )


class PendingReport(Protocol):
    """What a command shows of ``build_pending``."""

    def started(self, total: int, at_once: int) -> None:
        """The builds about to run, and how many run at once."""

    def step(self, pseudonym: str, name: str) -> None:
        """A build begins a step (only when one build runs at a time: several would talk over each other)."""

    def built(self, agent_id: uuid.UUID, participant_id: uuid.UUID) -> None:
        """An agent was built (called from its builder's thread)."""

    def failed(self, pseudonym: str, exc: ProviderError) -> None:
        """A model failed on one participant; the others go on."""

    def finished_one(self) -> None:
        """One build ended, built, failed or not this process's to make."""


class Unshown:
    """A ``PendingReport`` that shows nothing."""

    def started(self, total: int, at_once: int) -> None:
        return None

    def step(self, pseudonym: str, name: str) -> None:
        return None

    def built(self, agent_id: uuid.UUID, participant_id: uuid.UUID) -> None:
        return None

    def failed(self, pseudonym: str, exc: ProviderError) -> None:
        return None

    def finished_one(self) -> None:
        return None


def build_pending(builder: Builder, report: PendingReport | None = None) -> tuple[int, int]:
    """Build every pending agent, each in its own transactions, so an interruption keeps finished ones.

    As many agents are built at once as the process has model calls in flight (one for the embedded model),
    and their calls share that limit. A model failure on one participant is reported and the others go on.
    Returns (built, failed).
    """
    shown: PendingReport = report or Unshown()
    with builder.sessions() as session:
        pending = [(p.id, p.pseudonym) for p in pending_participants(session, builder.config())]
    at_once = builder.in_flight.size if builder.in_flight is not None else 1
    outcomes, counting = {"built": 0, "failed": 0}, threading.Lock()
    shown.started(len(pending), at_once)

    def build_one(participant_id: uuid.UUID, pseudonym: str) -> None:
        def step(name: str) -> None:
            if at_once == 1:
                shown.step(pseudonym, name)

        try:
            agent_id = run_build(builder, participant_id, on_step=step)
            if agent_id is not None:  # None: another build process has it or has just built it, or they withdrew
                with counting:
                    outcomes["built"] += 1
                shown.built(agent_id, participant_id)
        except ProviderError as exc:
            with counting:
                outcomes["failed"] += 1
            shown.failed(pseudonym, exc)
        shown.finished_one()

    if at_once == 1:
        for participant_id, pseudonym in pending:
            build_one(participant_id, pseudonym)
        return outcomes["built"], outcomes["failed"]
    with ThreadPoolExecutor(at_once, thread_name_prefix="build") as builders:
        started = [builders.submit(build_one, *person) for person in pending]
        try:
            for done in started:
                done.result()
        except BaseException:  # interrupted: start no more; the builds under way end with their calls
            builders.shutdown(wait=False, cancel_futures=True)
            if builder.in_flight is not None:
                builder.in_flight.close()
            raise
    return outcomes["built"], outcomes["failed"]
