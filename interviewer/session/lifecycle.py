"""Pausing, reviewing and finishing an interview (resuming it is a turn: ``turns``).

Finishing applies the participant's redactions while the transcript is still a draft, freezes it,
queues their agent's build and hands them an access code for the portal.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from agentbank.access.clients import issue_participant_token, revoke_participant_tokens
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.building.agents import BUILD_QUEUE, BUILD_TASK
from agentbank.building.transcripts import TurnText, load_turns
from agentbank.core.errors import ConflictError, InvalidRequestError
from agentbank.core.statuses import ConsentStatus, InterviewStatus, TranscriptStatus, move
from agentbank.db.models import AudioChunk, InterviewSession, Participant, Transcript, Turn
from agentbank.db.queue import enqueue
from interviewer.session.access_codes import new_access_code
from interviewer.session.interviews import (
    ACCESS_CODE_LIFETIME_S,
    InterviewState,
    SessionServices,
    actor_of,
    cipher_of,
    script_of,
)
from interviewer.session.transcripts import state_of

REDACTED = "[redacted]"


@dataclass(frozen=True)
class Redaction:
    """A passage of one of the participant's own turns to remove; no passage means the whole turn."""

    position: int
    text: str | None = None


def pause(session: Session, services: SessionServices, interview: InterviewSession) -> InterviewState:
    """Pause an active interview (the time away does not count against any question)."""
    status = move(interview.status, InterviewStatus.PAUSED, "the interview")
    participant = session.get_one(Participant, interview.participant_id)  # its key is unwrapped once, for the state
    interview.status, interview.updated_at = status, services.clock()
    audit.record(session, actor_of(participant), "interview.pause", Tier.PARTICIPANT, participant_id=participant.id)
    return state_of(session, services, interview)


def transcript(session: Session, services: SessionServices, interview: InterviewSession) -> list[TurnText]:
    """The participant's own transcript, every turn in order."""
    participant, cipher = cipher_of(session, services, interview)
    audit.record(
        session, actor_of(participant), "interview.transcript.view", Tier.PARTICIPANT, participant_id=participant.id
    )
    return load_turns(session, interview.transcript_id, cipher)


def module_titles(interview: InterviewSession, turns: list[TurnText]) -> list[str | None]:
    """For each turn, the title of the script's module it belongs to (None before the first question).

    A module begins with the interviewer turn that asks one of its scripted questions verbatim;
    follow-ups and answers belong to the module of the question before them.
    """
    questions = [(module.title, question.text.strip()) for module, question in script_of(interview).questions()]
    titles: list[str | None] = []
    current: str | None = None
    for turn in turns:
        if turn.speaker == "interviewer":
            current = next((title for title, text in questions if text and text in turn.text), current)
        titles.append(current)
    return titles


def finish(
    session: Session,
    services: SessionServices,
    interview: InterviewSession,
    redactions: list[Redaction],
    *,
    confirm: bool,
) -> str:
    """Apply redactions, make the transcript final, queue the agent build; the portal access code.

    The code is a long-lived participant credential: it signs the participant in to the portal.
    """
    if not confirm:
        raise InvalidRequestError("confirm the transcript to finish the interview")
    if interview.status == InterviewStatus.FINISHED:
        raise ConflictError("this interview is already finished")
    participant, cipher = cipher_of(session, services, interview)
    rows = {
        turn.position: turn
        for turn in session.scalars(select(Turn).where(Turn.transcript_id == interview.transcript_id))
    }
    if not any(turn.speaker == "participant" for turn in rows.values()):
        raise ConflictError("there is nothing to confirm yet: the interview has no answers")
    redacted_turns: set[int] = set()
    for redaction in redactions:
        turn = rows.get(redaction.position)
        if turn is None or turn.speaker != "participant":
            raise InvalidRequestError(f"turn {redaction.position} is not one of your answers")
        text = cipher.open(turn.text_encrypted)
        if redaction.text is None or not redaction.text.strip():
            text = REDACTED
        elif redaction.text in text:
            text = text.replace(redaction.text, REDACTED)
        else:
            # The message never repeats the passage: errors are logged, and logs hold no transcript text.
            raise InvalidRequestError(f"the passage to redact was not found in turn {redaction.position}")
        turn.text_encrypted = cipher.seal(text)
        redacted_turns.add(redaction.position)
    if redacted_turns:
        # The recording would still hold what was removed from the text.
        session.execute(
            delete(AudioChunk).where(AudioChunk.session_id == interview.id, AudioChunk.turn.in_(redacted_turns))
        )
    session.flush()
    now = services.clock()
    record = session.get_one(Transcript, interview.transcript_id)
    record.status, record.finalized_at = move(record.status, TranscriptStatus.FINAL, "the transcript"), now
    participant.consent = move(participant.consent, ConsentStatus.CONSENTED, "the participant")
    interview.status, interview.updated_at = move(interview.status, InterviewStatus.FINISHED, "the interview"), now
    session.flush()
    enqueue(session, BUILD_QUEUE, BUILD_TASK, [{"participant_id": str(participant.id), "population": {}}])
    # The interview's token ends here: from now on only the access code (kept by the person) signs in,
    # so a token left in a shared browser cannot read the transcript or withdraw.
    revoke_participant_tokens(session, participant.id, now)
    code = issue_participant_token(session, participant, ACCESS_CODE_LIFETIME_S, token=new_access_code())
    audit.record(
        session,
        actor_of(participant),
        "interview.finish",
        Tier.PARTICIPANT,
        participant_id=participant.id,
        details={"redacted_turns": sorted(redacted_turns)},
    )
    return code
