"""Where an interview stands, all kept in the database: the participant's interview, locked or not, its
script, position and state, and the turns of its transcript.

Domain functions over a SQLAlchemy session; the caller owns the transaction. Nothing about where an
interview stands lives in memory, so a restarted server continues where the participant stopped.
Every participant action is audited in the same transaction as the action. What changes an interview
is built on this module: a turn (``turns``), invitations, pausing and finishing (``lifecycle``),
spoken answers (``audio_turns``) and notes (``notes``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.building.transcripts import TurnText, load_turns
from agentbank.db.models import InterviewSession, Participant, Turn
from agentbank.errors import ConflictError, NotFoundError
from agentbank.keys.crypto import Cipher, KeyRing
from agentbank.providers.chat import ChatModel
from agentbank.statuses import InterviewStatus
from interviewer.engine import Position
from interviewer.script import Script
from interviewer.transcription import Transcriber

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


@dataclass
class Services:
    """What interviews need besides the database: keys, the interviewer's model, a transcriber."""

    keys: KeyRing
    chat: ChatModel
    transcriber: Transcriber | None = None
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))


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


def cipher_of(session: Session, services: Services, interview: InterviewSession) -> tuple[Participant, Cipher]:
    """The participant and the cipher of their data."""
    participant = session.get_one(Participant, interview.participant_id)
    return participant, services.keys.cipher(participant.id, participant.wrapped_key)


def position_of(interview: InterviewSession, cipher: Cipher) -> Position:
    """The engine's view of the stored position."""
    notes = cipher.open(interview.notes_encrypted).split("\n") if interview.notes_encrypted else []
    return Position(
        interview.question_index, interview.follow_ups, dict(interview.seconds_used), tuple(n for n in notes if n)
    )


def state_from(interview: InterviewSession, script: Script, turns: list[TurnText]) -> InterviewState:
    """Status, the interviewer's last words, the current question and progress, from what is loaded."""
    questions = script.questions()
    total = len(questions)
    last_words = next((t.text for t in reversed(turns) if t.speaker == "interviewer"), "")
    done = interview.status in (InterviewStatus.REVIEW, InterviewStatus.FINISHED)
    current_question = questions[interview.question_index] if interview.question_index < total else None
    module, question = current_question if current_question and not done else (None, None)
    return InterviewState(
        status=interview.status,
        turn=(turns[-1].position if turns else 0) + 1,
        prompt=last_words,
        question=question.text if question else None,
        question_key=question.key if question else None,
        module=module.key if module else None,
        module_title=module.title if module else None,
        index=min(interview.question_index + 1, total),
        total=total,
        seconds_used=round(interview.seconds_used.get(question.key, 0.0), 1) if question else 0.0,
        seconds_budget=question.seconds if question else 0,
        progress=100 if done else round(100 * interview.question_index / total),
        awaiting_reply=bool(turns) and turns[-1].speaker == "participant",
    )


def state_of(session: Session, services: Services, interview: InterviewSession) -> InterviewState:
    """Where the interview stands, read from the database (a turn in progress knows it already)."""
    _, cipher = cipher_of(session, services, interview)
    return state_from(interview, script_of(interview), load_turns(session, interview.transcript_id, cipher))


def next_position(session: Session, interview: InterviewSession) -> int:
    """The transcript position the next turn takes: one query, nothing decrypted (chunks ask it each time)."""
    last = session.scalar(select(func.max(Turn.position)).where(Turn.transcript_id == interview.transcript_id))
    return (last or 0) + 1


def current_question(interview: InterviewSession) -> str | None:
    """The scripted question under discussion, read from the script alone (no transcript)."""
    questions = script_of(interview).questions()
    return questions[interview.question_index][1].text if interview.question_index < len(questions) else None


def require_active(interview: InterviewSession) -> None:
    """Refuse answers unless the interview is under way."""
    if interview.status == InterviewStatus.PAUSED:
        raise ConflictError("the interview is paused; resume it first")
    if interview.status != InterviewStatus.ACTIVE:
        raise ConflictError("the interview's questions are over")


def add_turn(
    session: Session,
    transcript_id: uuid.UUID,
    position: int,
    speaker: str,
    text: str,
    cipher: Cipher,
    started: datetime,
    ended: datetime,
) -> None:
    """Store one turn of the transcript, sealed with the participant's key."""
    session.add(
        Turn(
            transcript_id=transcript_id,
            position=position,
            speaker=speaker,
            text_encrypted=cipher.seal(text),
            started_at=started,
            ended_at=ended,
        )
    )
    session.flush()
