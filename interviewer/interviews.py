"""Interview sessions: invitation, consent, answers, pause and resume, all kept in the database.

Domain functions over a SQLAlchemy session; the caller owns the transaction. Nothing about where an
interview stands lives in memory, so a restarted server continues where the participant stopped.
Every participant action is audited in the same transaction as the action.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
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
from agentbank.statuses import InterviewStatus, move
from interviewer.engine import Exchange, Interviewer, Position, Step
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


def state_of(session: Session, services: Services, interview: InterviewSession) -> InterviewState:
    """Status, the interviewer's last words, the current question and progress."""
    _, cipher = cipher_of(session, services, interview)
    script = script_of(interview)
    engine = Interviewer(script, services.chat)
    turns = load_turns(session, interview.transcript_id, cipher)
    last_words = next((t.text for t in reversed(turns) if t.speaker == "interviewer"), "")
    current_question = engine.question(Position(interview.question_index))
    done = interview.status in (InterviewStatus.REVIEW, InterviewStatus.FINISHED)
    module, question = current_question if current_question and not done else (None, None)
    return InterviewState(
        status=interview.status,
        turn=(turns[-1].position if turns else 0) + 1,
        prompt=last_words,
        question=question.text if question else None,
        question_key=question.key if question else None,
        module=module.key if module else None,
        module_title=module.title if module else None,
        index=min(interview.question_index + 1, engine.total),
        total=engine.total,
        seconds_used=round(interview.seconds_used.get(question.key, 0.0), 1) if question else 0.0,
        seconds_budget=question.seconds if question else 0,
        progress=100 if done else round(100 * interview.question_index / engine.total),
        awaiting_reply=bool(turns) and turns[-1].speaker == "participant",
    )


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


def answer_text(
    session: Session, services: Services, interview: InterviewSession, text: str, *, seconds: float | None = None
) -> InterviewState:
    """Store the participant's answer, let the interviewer decide, store its next turn; the new state.

    All in the caller's transaction, for callers that hold no lock (the terminal interview, tests),
    the notes on the answer taken too; the HTTP routes use ``replies`` and ``notes`` so that no
    transaction waits on the model and nobody waits for the notes.
    """
    from interviewer import notes, replies  # they build on this module

    pending = replies.store_answer(session, services, interview, text, seconds=seconds)
    replies.store_reply(session, services, interview, pending, replies.decide(services, pending))
    notes.take_in(session, services, interview)
    return state_of(session, services, interview)


def reply_to_last(
    session: Session,
    services: Services,
    interview: InterviewSession,
    cipher: Cipher,
    turns: list[TurnText],
    seconds: float = 0.0,
) -> str:
    """Run the engine on the last answer and store the interviewer's reply and the new position.

    Returns the engine's action ("follow_up", "next" or "closing").
    """
    engine = Interviewer(script_of(interview), services.chat)
    step = engine.respond(
        position_of(interview, cipher), turns[-1].text, seconds, [Exchange(t.speaker, t.text) for t in turns]
    )
    apply_step(session, services, interview, cipher, turns[-1].position + 1, step)
    return step.action


def apply_step(
    session: Session, services: Services, interview: InterviewSession, cipher: Cipher, position: int, step: Step
) -> None:
    """Store the interviewer's turn at ``position`` and the position the engine moved to."""
    now = services.clock()
    add_turn(session, interview.transcript_id, position, "interviewer", step.text, cipher, now, now)
    interview.question_index = step.position.index
    interview.follow_ups = step.position.follow_ups
    interview.seconds_used = step.position.seconds_used
    # No notes: a step never changes them, and notes taken meanwhile (``interviewer.notes``) must stay.
    interview.updated_at = now
    if step.action == "closing":
        interview.status = move(interview.status, InterviewStatus.REVIEW, "the interview")
    session.flush()


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
