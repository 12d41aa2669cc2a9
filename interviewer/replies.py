"""An answer and the interviewer's reply, in three steps so that no transaction waits on the model.

1. ``store_answer`` (in a transaction, the interview locked): the participant's turn is stored.
2. ``decide`` (no transaction, no lock): the interviewer's model chooses the next thing to say.
3. ``store_reply`` (in a transaction, the interview locked again): the reply and the new position
   are stored, unless the interview has moved on meanwhile (a reply stored by a resume).

A crash between 1 and 3 leaves an answer without its reply, which the next answer or resume replies
to first; so the answer, once acknowledged, is never lost and never asked for again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.building.transcripts import TurnText, load_turns
from agentbank.db.models import InterviewSession, Participant, Turn
from agentbank.errors import InvalidRequestError
from agentbank.keys.crypto import Cipher
from agentbank.providers.chat import ChatModel
from interviewer import interviews
from interviewer.engine import Exchange, Interviewer, Position, Step
from interviewer.interviews import MAX_ANSWER_CHARS, MAX_TEXT_ANSWER_S, Services
from interviewer.script import Script


@dataclass(frozen=True)
class Pending:
    """A stored answer waiting for the interviewer's reply, with all the decision needs."""

    participant_id: uuid.UUID
    answer_position: int
    script: Script
    position: Position
    answer: str
    seconds: float
    exchanges: list[Exchange]
    mode: str


def store_answer(
    session: Session, services: Services, interview: InterviewSession, text: str, *, seconds: float | None = None
) -> Pending:
    """Store the participant's answer (the interview locked by the caller); what the reply needs.

    ``seconds`` is how long the answer took (an audio turn's length); a typed answer is timed from
    the moment the interviewer's turn was shown, capped.
    """
    text = " ".join(text.split())
    if not text:
        raise InvalidRequestError("the answer is empty")
    if len(text) > MAX_ANSWER_CHARS:
        raise InvalidRequestError(f"the answer is longer than {MAX_ANSWER_CHARS} characters; send it in parts")
    interviews.require_active(interview)
    participant, cipher = interviews.cipher_of(session, services, interview)
    turns = load_turns(session, interview.transcript_id, cipher)
    if turns and turns[-1].speaker == "participant":
        interviews.reply_to_last(session, services, interview, cipher, turns)  # an earlier answer still waits
        turns = load_turns(session, interview.transcript_id, cipher)
    now = services.clock()
    took = (
        seconds
        if seconds is not None
        else min(max((now - interview.updated_at).total_seconds(), 0.0), MAX_TEXT_ANSWER_S)
    )
    position = turns[-1].position + 1
    interviews.add_turn(
        session, interview.transcript_id, position, "participant", text, cipher, now - timedelta(seconds=took), now
    )
    return _pending(participant, interview, cipher, turns, text, took, "text" if seconds is None else "audio")


def preview(
    session: Session, services: Services, interview: InterviewSession, text: str, seconds: float
) -> Pending | None:
    """What ``store_answer`` would hand the decision for this spoken answer (or the start of it, or none
    yet), storing nothing; None when an earlier answer still waits for its reply (the decision ahead
    would not be the one made)."""
    text = " ".join(text.split())
    participant, cipher = interviews.cipher_of(session, services, interview)
    turns = load_turns(session, interview.transcript_id, cipher)
    if not turns or turns[-1].speaker == "participant":
        return None
    return _pending(participant, interview, cipher, turns, text, seconds, "audio")


def _pending(participant: Participant, interview: InterviewSession, cipher: Cipher, turns: list[TurnText], text: str,
             seconds: float, mode: str) -> Pending:  # fmt: skip
    position = turns[-1].position + 1
    return Pending(
        participant_id=participant.id,
        answer_position=position,
        script=interviews.script_of(interview),
        position=interviews.position_of(interview, cipher),
        answer=text,
        seconds=seconds,
        exchanges=[Exchange(t.speaker, t.text) for t in [*turns, TurnText(position, "participant", text)]],
        mode=mode,
    )


def decide(services: Services, pending: Pending) -> Step:
    """The interviewer's next turn after the pending answer: the model's call, outside any transaction."""
    return decide_with(services.chat, pending)


def decide_with(chat: ChatModel, pending: Pending) -> Step:
    """The interviewer's next turn with this chat model (a decision made ahead uses its own)."""
    return Interviewer(pending.script, chat).respond(pending.position, pending.answer, pending.seconds,
                                                     pending.exchanges)  # fmt: skip


def store_reply(
    session: Session, services: Services, interview: InterviewSession, pending: Pending, step: Step
) -> bool:
    """Store the reply and the new position (the interview locked again); False when it moved on meanwhile."""
    last = session.scalars(
        select(Turn).where(Turn.transcript_id == interview.transcript_id).order_by(Turn.position.desc()).limit(1)
    ).first()
    if last is None or last.position != pending.answer_position or last.speaker != "participant":
        return False  # another request replied to this answer first
    participant = session.get_one(Participant, pending.participant_id)
    cipher = services.keys.cipher(participant.id, participant.wrapped_key)
    interviews.apply_step(session, services, interview, cipher, pending.answer_position + 1, step)
    audit.record(
        session,
        interviews.actor_of(participant),
        "interview.answer",
        "participant",
        participant_id=participant.id,
        details={"turn": pending.answer_position, "next": step.action, "mode": pending.mode},
    )
    return True
