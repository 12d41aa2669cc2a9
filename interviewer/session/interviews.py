"""Where an interview stands, all kept in the database: the participant's interview, locked or not, its
script, the cipher of its participant's data and what every change of it checks.

Domain functions over a SQLAlchemy session; the caller owns the transaction. Nothing about where an
interview stands lives in memory, so a restarted server continues where the participant stopped.
Every participant action is audited in the same transaction as the action. What changes an interview
is built on this module: the transcript's turns and where the interview stands (``transcripts``),
invitations, pausing and finishing (``lifecycle``), and above the session, spoken answers
(``hearing.recordings``), notes (``deciding.notes``) and a turn's owner (``interviewer.turns``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.core.errors import ConflictError, NotFoundError
from agentbank.core.statuses import InterviewStatus
from agentbank.db.models import InterviewSession, Participant, Turn
from agentbank.keys.crypto import Cipher, KeyRing
from interviewer.session.script import Question, Script

# The portal's access code outlives years.
ACCESS_CODE_LIFETIME_S = 10 * 365 * 24 * 3600
# A typed answer left open while someone makes tea is not ten minutes of interview.
MAX_TEXT_ANSWER_S = 300.0
MAX_ANSWER_CHARS = 20_000


# PostgreSQL's "lock_not_available": a NOWAIT lock found the row held by another transaction.
_LOCK_NOT_AVAILABLE = "55P03"


class InterviewBusyError(ConflictError):
    """Another request is changing this interview right now; the client may try again shortly."""

    code = "interview_busy"


class ReplyPendingError(ConflictError):
    """The last answer has no reply yet (the server stopped while deciding): resuming gives it one."""

    code = "reply_pending"


# Opens one unit of work: a session in a transaction, committed when the block succeeds and rolled
# back when it raises (``agentbank.db.transaction`` over the bank's sessions).
Transactions = Callable[[], AbstractContextManager[Session]]


class SessionServices(Protocol):
    """What the session's own functions need besides the database: the keys and the time. The services an
    interview runs with (``interviewer.services.Services``) are this and more; each room names what it uses."""

    @property
    def keys(self) -> KeyRing: ...

    @property
    def clock(self) -> Callable[[], datetime]: ...


@dataclass(frozen=True)
class InterviewState:
    """Where an interview stands, as shown to the participant."""

    status: str
    turn: int
    prompt: str
    question: str | None
    question_key: str | None
    module: str | None
    module_title: str | None
    index: int
    total: int
    seconds_used: float
    seconds_budget: int
    progress: int
    # The last answer has no reply yet (the server stopped while deciding): resume gives it one.
    awaiting_reply: bool = False


def actor_of(participant: Participant) -> audit.Actor:
    """The audit log's name for a participant, as their principal is named."""
    return audit.Actor("participant", participant.pseudonym)


def current(session: Session, participant_id: uuid.UUID, *, lock: bool = False, wait: bool = False) -> InterviewSession:
    """The participant's interview (their newest), or NotFoundError.

    With ``lock`` the interview's row is locked until the transaction ends, so two requests that
    change one interview never interleave; a request finding it locked gets InterviewBusyError at
    once rather than waiting behind a transcription. With ``wait`` too, the lock is waited for: a
    request that has already stored an answer must store its reply, not fail.
    """
    query = (
        select(InterviewSession)
        .where(InterviewSession.participant_id == participant_id)
        .order_by(InterviewSession.created_at.desc())
        .limit(1)
    )
    if lock:
        query = query.with_for_update(nowait=not wait)
    try:
        interview = session.scalars(query.execution_options(populate_existing=True)).first()
    except OperationalError as exc:
        if getattr(exc.orig, "sqlstate", None) == _LOCK_NOT_AVAILABLE:
            raise InterviewBusyError("another request is changing this interview; try again in a moment") from None
        raise
    if interview is None:
        raise NotFoundError("there is no interview for this participant")
    return interview


def script_of(interview: InterviewSession) -> Script:
    """The script the interview follows, exactly as it was when the interview began."""
    return Script.model_validate(interview.script)


def cipher_of(session: Session, services: SessionServices, interview: InterviewSession) -> tuple[Participant, Cipher]:
    """The participant and the cipher of their data."""
    participant = session.get_one(Participant, interview.participant_id)
    return participant, services.keys.cipher(participant.id, participant.wrapped_key)


def next_position(session: Session, interview: InterviewSession) -> int:
    """The transcript position the next turn takes: one query, nothing decrypted (chunks ask it each time)."""
    last = session.scalar(select(func.max(Turn.position)).where(Turn.transcript_id == interview.transcript_id))
    return (last or 0) + 1


def scripted_question(interview: InterviewSession) -> Question | None:
    """The scripted question under discussion (its follow-ups are asked under it), read from the script alone
    (no transcript); None once the questions are over."""
    questions = script_of(interview).questions()
    return questions[interview.question_index][1] if interview.question_index < len(questions) else None


def require_recording(session: Session, interview: InterviewSession, turn: int) -> None:
    """Refuse audio unless the interview is under way and ``turn`` is the answer being recorded (one query,
    nothing decrypted: every chunk asks)."""
    require_active(interview)
    if turn != next_position(session, interview):
        raise ConflictError(f"turn {turn} is not the answer being recorded")


def require_active(interview: InterviewSession) -> None:
    """Refuse answers unless the interview is under way."""
    if interview.status == InterviewStatus.PAUSED:
        raise ConflictError("the interview is paused; resume it first")
    if interview.status != InterviewStatus.ACTIVE:
        raise ConflictError("the interview's questions are over")
