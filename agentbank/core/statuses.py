"""Every status the bank stores, and the moves between them, in one place.

Each enumeration is a ``StrEnum``, so it is stored as its plain value and compares equal to it. A status
changes only through ``move`` (one row) or ``sources`` (the ``WHERE`` of a bulk update), so a transition
that is not listed in ``TRANSITIONS`` cannot happen by accident in a new code path.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, TypeVar

from sqlalchemy import String
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from agentbank.core.errors import ConflictError


class AgentStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"  # a newer build of the same participant answers instead
    WITHDRAWN = "withdrawn"


class ConsentStatus(StrEnum):
    INTERVIEWING = "interviewing"  # consented to the interview; the transcript is not confirmed yet
    CONSENTED = "consented"
    WITHDRAWN = "withdrawn"


class InterviewStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    REVIEW = "review"  # the participant reads the transcript and may remove passages
    FINISHED = "finished"


class TranscriptStatus(StrEnum):
    DRAFT = "draft"
    FINAL = "final"


class JobStatus(StrEnum):
    QUEUED = "queued"
    DONE = "done"
    PARTIAL = "partial"  # some agents' parts failed for good; their quota was returned
    FAILED = "failed"


class GroupStatus(StrEnum):
    """A focus group, from its submission to its end."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"  # the moderator closed it
    STOPPED = "stopped"  # its project's approval lapsed: nobody answers any more
    FAILED = "failed"  # every attempt of its task failed


class SeatStatus(StrEnum):
    """An agent's seat in a focus group."""

    ACTIVE = "active"
    REMOVED = "removed"  # its participant withdrew: it left at once, its words unreadable


class TaskStatus(StrEnum):
    """The outcome of one agent's part of a job."""

    RELEASED = "released"
    WITHHELD = "withheld"  # at least one answer waits for a reviewer
    UNAVAILABLE = "unavailable"  # the participant withdrew, or the project's approval lapsed
    FAILED = "failed"  # every attempt failed


class BatchStatus(StrEnum):
    """A population batch sent through a provider's Batch API."""

    SUBMITTED = "submitted"  # the provider is answering it (within its completion window)
    COLLECTED = "collected"  # its answers are stored and released to the open tier
    FAILED = "failed"  # the provider ended it without answers (failed, expired or cancelled)


class BatteryWaveStatus(StrEnum):
    """A wave of the participant's own survey."""

    SCHEDULED = "scheduled"  # the retest, offered from its due date
    OPEN = "open"  # being answered
    COMPLETE = "complete"


class PanelOutcome(StrEnum):
    """What a recruitment panel reported of a study's participant who did not complete there."""

    TIMED_OUT = "timed_out"  # the panel's time for the study ran out (Prolific: TIMED-OUT)
    RETURNED = "returned"  # the participant gave the study back (Prolific: RETURNED)


class ProjectStatus(StrEnum):
    FORMING = "forming"  # the members it names have not all accepted yet: nobody can review it
    SUBMITTED = "submitted"
    APPROVED = "approved"
    REJECTED = "rejected"


class ClientStatus(StrEnum):
    ACTIVE = "active"
    REVOKED = "revoked"


class WithheldStatus(StrEnum):
    PENDING = "pending"
    RELEASED = "released"
    KEPT = "kept"
    WITHDRAWN = "withdrawn"  # the participant withdrew before a reviewer decided


S = TypeVar("S", bound=StrEnum)

TRANSITIONS: dict[type[StrEnum], dict[Any, frozenset[Any]]] = {
    AgentStatus: {
        AgentStatus.ACTIVE: frozenset({AgentStatus.SUPERSEDED, AgentStatus.WITHDRAWN}),
        AgentStatus.SUPERSEDED: frozenset({AgentStatus.WITHDRAWN}),
        AgentStatus.WITHDRAWN: frozenset(),
    },
    ConsentStatus: {
        ConsentStatus.INTERVIEWING: frozenset({ConsentStatus.CONSENTED, ConsentStatus.WITHDRAWN}),
        ConsentStatus.CONSENTED: frozenset({ConsentStatus.WITHDRAWN}),
        ConsentStatus.WITHDRAWN: frozenset(),
    },
    InterviewStatus: {
        InterviewStatus.ACTIVE: frozenset({InterviewStatus.PAUSED, InterviewStatus.REVIEW}),
        InterviewStatus.PAUSED: frozenset({InterviewStatus.ACTIVE, InterviewStatus.REVIEW}),
        InterviewStatus.REVIEW: frozenset({InterviewStatus.FINISHED}),
        InterviewStatus.FINISHED: frozenset(),
    },
    TranscriptStatus: {
        TranscriptStatus.DRAFT: frozenset({TranscriptStatus.FINAL}),
        TranscriptStatus.FINAL: frozenset(),
    },
    JobStatus: {
        JobStatus.QUEUED: frozenset({JobStatus.DONE, JobStatus.PARTIAL, JobStatus.FAILED}),
        JobStatus.DONE: frozenset(),
        JobStatus.PARTIAL: frozenset(),
        JobStatus.FAILED: frozenset(),
    },
    # A run that was stopped or killed goes on running; a queued group may fail or stop before it ran a turn.
    GroupStatus: {
        GroupStatus.QUEUED: frozenset({GroupStatus.RUNNING, GroupStatus.STOPPED, GroupStatus.FAILED}),
        GroupStatus.RUNNING: frozenset({GroupStatus.DONE, GroupStatus.STOPPED, GroupStatus.FAILED}),
        GroupStatus.DONE: frozenset(),
        GroupStatus.STOPPED: frozenset(),
        GroupStatus.FAILED: frozenset(),
    },
    SeatStatus: {
        SeatStatus.ACTIVE: frozenset({SeatStatus.REMOVED}),
        SeatStatus.REMOVED: frozenset(),
    },
    # A task's result is written once and never changes (a reviewer's release is the withheld answer's own).
    TaskStatus: {status: frozenset() for status in TaskStatus},
    BatchStatus: {
        BatchStatus.SUBMITTED: frozenset({BatchStatus.COLLECTED, BatchStatus.FAILED}),
        BatchStatus.COLLECTED: frozenset(),
        BatchStatus.FAILED: frozenset(),
    },
    BatteryWaveStatus: {
        BatteryWaveStatus.SCHEDULED: frozenset({BatteryWaveStatus.OPEN}),
        BatteryWaveStatus.OPEN: frozenset({BatteryWaveStatus.COMPLETE}),
        BatteryWaveStatus.COMPLETE: frozenset(),
    },
    # A participant whose time ran out may still give the study back; one who gave it back has ended there.
    PanelOutcome: {
        PanelOutcome.TIMED_OUT: frozenset({PanelOutcome.RETURNED}),
        PanelOutcome.RETURNED: frozenset(),
    },
    ProjectStatus: {
        ProjectStatus.FORMING: frozenset({ProjectStatus.SUBMITTED}),
        ProjectStatus.SUBMITTED: frozenset({ProjectStatus.APPROVED, ProjectStatus.REJECTED}),
        ProjectStatus.APPROVED: frozenset(),
        ProjectStatus.REJECTED: frozenset(),
    },
    ClientStatus: {
        ClientStatus.ACTIVE: frozenset({ClientStatus.REVOKED}),
        ClientStatus.REVOKED: frozenset(),
    },
    WithheldStatus: {
        WithheldStatus.PENDING: frozenset({WithheldStatus.RELEASED, WithheldStatus.KEPT, WithheldStatus.WITHDRAWN}),
        WithheldStatus.KEPT: frozenset({WithheldStatus.WITHDRAWN}),
        WithheldStatus.RELEASED: frozenset(),
        WithheldStatus.WITHDRAWN: frozenset(),
    },
}


class InvalidTransitionError(ConflictError):
    """A status change the bank does not allow (e.g. deciding an answer twice)."""

    code = "invalid_transition"


def can_move(current: S, target: S) -> bool:
    """Whether a row may go from ``current`` to ``target``."""
    return target in TRANSITIONS[type(current)][current]


def move(current: S, target: S, what: str) -> S:
    """``target`` when the move is allowed, else an ``InvalidTransitionError`` naming ``what``."""
    if not can_move(current, target):
        raise InvalidTransitionError(f"{what} is already {current.value} and cannot become {target.value}")
    return target


def sources(target: S) -> list[S]:
    """The statuses a row may move to ``target`` from: the ``WHERE`` of a bulk update."""
    table = TRANSITIONS[type(target)]
    return [status for status, targets in table.items() if target in targets]


def terminal(status: StrEnum) -> bool:
    """Whether nothing follows ``status``."""
    return not TRANSITIONS[type(status)][status]


class StatusColumn(TypeDecorator[StrEnum]):
    """A status stored as its plain value (a short string) and read back as its enumeration.

    The database column stays ``varchar(16)``, so the schema does not change; an unknown value is refused
    on the way in rather than stored.
    """

    impl = String(16)
    cache_ok = True

    def __init__(self, enum: type[StrEnum]) -> None:
        super().__init__()
        self.enum = enum

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else self.enum(value).value

    def process_result_value(self, value: Any, dialect: Dialect) -> StrEnum | None:
        return None if value is None else self.enum(value)
