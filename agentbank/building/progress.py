"""Where agent builds stand: progress while one runs, failures with their reasons, the queue's counts.

A build can take minutes on a small machine, so the worker says which agent of how many it is on,
at which step and for how long, and every failed attempt says why and what to do about it.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from agentbank.building.agents import BUILD_QUEUE, BuildConfig
from agentbank.core.errors import AgentBankError
from agentbank.core.statuses import AgentStatus
from agentbank.db.models import Agent, BuildFailure, Participant

log = logging.getLogger("agentbank.runtime.worker.builds")


@dataclass(frozen=True)
class BuildCounts:
    """Build tasks by state in the queue."""

    queued: int = 0
    running: int = 0
    failed: int = 0
    succeeded: int = 0


def build_counts(session: Session) -> BuildCounts:
    """How many build tasks are queued, running, failed for good and done."""
    rows = session.execute(
        text("SELECT status::text, count(*) FROM procrastinate_jobs WHERE queue_name = :queue GROUP BY status"),
        {"queue": BUILD_QUEUE},
    )
    counts: dict[str, int] = {status: n for status, n in rows}
    return BuildCounts(
        queued=counts.get("todo", 0),
        running=counts.get("doing", 0),
        failed=counts.get("failed", 0),
        succeeded=counts.get("succeeded", 0),
    )


def new_agents_in_build(session: Session) -> int:
    """Builds queued or running for participants who have no active agent yet: the agents that are coming.

    A build marks its participant's agent active a moment before its task closes (and a rebuild runs while
    the old agent still answers), so counting tasks alone would count such an agent both as built and as
    being built."""
    return int(
        session.scalar(
            text(
                "SELECT count(*) FROM procrastinate_jobs AS job WHERE job.queue_name = :queue "
                "AND job.status IN ('todo', 'doing') AND NOT EXISTS (SELECT 1 FROM agents "
                "WHERE agents.participant_id::text = job.args->>'participant_id' AND agents.status = :active)"
            ),
            {"queue": BUILD_QUEUE, "active": AgentStatus.ACTIVE.value},
        )
        or 0
    )


@dataclass(frozen=True)
class FailedBuild:
    """A build that used up its attempts, with the last attempt's reason."""

    pseudonym: str
    attempts: int
    reason: str
    hint: str | None


def failed_builds(session: Session) -> list[FailedBuild]:
    """Builds that failed for good, newest first, each with why its last attempt failed."""
    failed = session.execute(
        text(
            "SELECT id, attempts, args->>'participant_id' FROM procrastinate_jobs "
            "WHERE queue_name = :queue AND status = 'failed' ORDER BY id DESC"
        ),
        {"queue": BUILD_QUEUE},
    ).all()
    result = []
    for task_id, attempts, participant_id in failed:
        pseudonym = session.scalar(select(Participant.pseudonym).where(Participant.id == uuid.UUID(participant_id)))
        last = session.scalars(
            select(BuildFailure).where(BuildFailure.task_id == task_id).order_by(BuildFailure.id.desc()).limit(1)
        ).first()
        reason = last.reason if last else "no reason recorded"
        result.append(FailedBuild(pseudonym or "(withdrawn)", attempts, reason, last.hint if last else None))
    return result


def agents_by_status(session: Session) -> dict[str, int]:
    """Agent versions counted by status (active, superseded, withdrawn)."""
    rows = session.execute(select(Agent.status, func.count()).group_by(Agent.status))
    return {status: n for status, n in rows}


def record_failure(session: Session, participant_id: uuid.UUID, task_id: int, attempt: int, exc: Exception) -> None:
    """Keep why an attempt failed. Only the bank's own errors say more than their type: others may quote data."""
    reason, hint = (exc.message, exc.hint) if isinstance(exc, AgentBankError) else (type(exc).__name__, None)
    session.add(
        BuildFailure(
            participant_id=participant_id, task_id=task_id, attempt=attempt,
            error=type(exc).__name__, reason=reason, hint=hint,
        )
    )  # fmt: skip


class BuildProgress:
    """Logs one build's steps: which agent of how many, the step, and the time since it started."""

    def __init__(self, pseudonym: str, position: int, total: int, attempt: int, max_attempts: int) -> None:
        self.pseudonym = pseudonym
        self.position, self.total = position, total
        self.attempt, self.max_attempts = attempt, max_attempts
        self.began = time.monotonic()

    @property
    def label(self) -> str:
        """``agent 2 of 11 (P-1a2b3c4d)``, with the attempt when it is a retry."""
        retry = f", attempt {self.attempt + 1} of {self.max_attempts}" if self.attempt else ""
        return f"agent {self.position} of {self.total} ({self.pseudonym}{retry})"

    def elapsed(self) -> str:
        """Time since the build started, as ``1 min 05 s``."""
        minutes, seconds = divmod(int(time.monotonic() - self.began), 60)
        return f"{minutes} min {seconds:02d} s" if minutes else f"{seconds} s"

    def step(self, what: str) -> None:
        """Log the step the build begins."""
        log.info("building %s: %s, %s", self.label, what, self.elapsed())

    def failed(self, exc: Exception, next_config: BuildConfig | None) -> None:
        """Log a failed attempt as a warning with what to do, and what the next attempt changes."""
        reason = exc.message if isinstance(exc, AgentBankError) else type(exc).__name__
        hint = exc.hint if isinstance(exc, AgentBankError) and exc.hint else None
        if next_config is not None:
            then = (
                f"retrying with a lighter budget ({next_config.reflection_word_budget} words reflected on, "
                f"{next_config.reflection_max_tokens} tokens per reflection)"
            )
            log.warning("build of %s failed after %s: %s; %s", self.label, self.elapsed(), reason, then)
        else:
            log.error(
                "build of %s failed for good after %s: %s; `agentbank status` lists it",
                self.label, self.elapsed(), reason,
            )  # fmt: skip
        if hint:
            log.warning("  → %s", hint)
