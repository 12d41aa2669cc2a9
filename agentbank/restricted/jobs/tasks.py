"""One agent's part of a job as a worker runs it: an attempt, and when it fails, the audit of why.

A failed attempt's own transaction was rolled back with its audit event, so the failure is audited in a
transaction of its own; after the last attempt the agent's part ends (``lifecycle.fail_job_task``), so the
job ends and the project gets its quota back. An attempt cut short by a stopping worker is no failure: it
goes back to the queue as it is.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.consultation.door import AgentDoor
from agentbank.core.errors import AgentBankError
from agentbank.db import transaction
from agentbank.db.models import Agent
from agentbank.restricted.jobs.lifecycle import fail_job_task, run_job_task

# Under the worker's logger, which the worker's console shows.
log = logging.getLogger("agentbank.runtime.worker.jobs")
WORKER = audit.Actor("system", "worker")


@dataclass(frozen=True)
class TaskAttempt:
    """One attempt of a job's queued task: the attempts made before it, and how many it may make."""

    before: int
    attempts: int

    @property
    def last(self) -> bool:
        """Whether the queue retries no more after this one."""
        return self.before + 1 >= self.attempts


def run_task(
    sessions: sessionmaker[Session], door: AgentDoor, job_id: uuid.UUID, agent_id: uuid.UUID, reference_dir: Path,
    attempt: TaskAttempt, *, stopping: threading.Event | None = None,
) -> bool:  # fmt: skip
    """One attempt at one agent's part of a job (``lifecycle.run_job_task``: False when its result was
    already written); a failure is audited, the last one ends the agent's part, and the error goes on to
    the queue, which retries it."""
    try:
        return run_job_task(sessions, door, job_id, agent_id, reference_dir)
    except Exception as exc:
        if stopping is None or not stopping.is_set():  # a stop puts the task back: that is no failure
            attempt_failed(sessions, job_id, agent_id, attempt, exc)
        raise


def attempt_failed(
    sessions: sessionmaker[Session], job_id: uuid.UUID, agent_id: uuid.UUID, attempt: TaskAttempt, exc: Exception
) -> None:
    """Audit a failed attempt and, after the last one, end the agent's part of the job. Only the bank's own
    errors say more than their type: others may quote data."""
    reason = exc.message if isinstance(exc, AgentBankError) else type(exc).__name__
    number = attempt.before + 1
    log.warning("a job task failed (attempt %d of %d): %s", number, attempt.attempts, reason)
    try:
        with transaction(sessions) as session:
            participant = session.scalar(select(Agent.participant_id).where(Agent.id == agent_id))
            audit.record(
                session, WORKER, "job.attempt_failed", Tier.RESTRICTED, agent_id=agent_id, participant_id=participant,
                details={"job_id": str(job_id), "attempt": number, "last": attempt.last, "reason": reason},
            )  # fmt: skip
            if attempt.last:
                fail_job_task(session, job_id, agent_id, reason)
    except SQLAlchemyError:  # the database went away too: the attempt's own error matters more
        log.warning("could not record why a job task failed")
