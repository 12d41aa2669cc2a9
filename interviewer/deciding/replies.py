"""What the interviewer's reply to an answer is decided on, and the decision itself, with no transaction open.

A turn (``turns``) decides on the answer it has just stored; a spoken answer's decision may start
before the turn has ended, on what the person has said so far (``hearing.listening``, ``speculation``).
Both build the decision's input here, so that the call made ahead and the call made at the end of the
turn are the same call when nothing more was said.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.orm import Session

from agentbank.building.transcripts import TurnText, load_turns
from agentbank.db.models import InterviewSession
from agentbank.keys.crypto import Cipher
from agentbank.providers.chat import ChatModel
from interviewer.deciding.interviewer import Exchange, Interviewer, Position, Step
from interviewer.deciding.reflecting import Summaries
from interviewer.deciding.speculation import SpeculativeChat
from interviewer.session.interviews import SessionServices, cipher_of, script_of
from interviewer.session.script import Script


class DecidingServices(SessionServices, Protocol):
    """What deciding needs besides the database: the session's services and the interviewer's model."""

    @property
    def chat(self) -> ChatModel: ...

    @property
    def summaries(self) -> Summaries: ...


@dataclass(frozen=True)
class Pending:
    """An answer waiting for the interviewer's reply, with all the decision needs."""

    participant_id: uuid.UUID
    answer_position: int
    script: Script
    position: Position
    answer: str
    seconds: float
    exchanges: list[Exchange]
    mode: str
    summaries: Summaries = Summaries.MODEL


def position_of(interview: InterviewSession, cipher: Cipher) -> Position:
    """The engine's view of the stored position (its notes decrypted)."""
    notes = cipher.open(interview.notes_encrypted).split("\n") if interview.notes_encrypted else []
    return Position(interview.question_index, interview.follow_ups, dict(interview.seconds_used),
                    tuple(n for n in notes if n), interview.reflecting)  # fmt: skip


def pending(interview: InterviewSession, cipher: Cipher, script: Script, turns: list[TurnText], seconds: float,
            mode: str, summaries: Summaries = Summaries.MODEL) -> Pending:  # fmt: skip
    """The decision's input for the last of ``turns`` (the participant's answer) that took ``seconds``, at
    the interview's stored position."""
    return Pending(
        participant_id=interview.participant_id,
        answer_position=turns[-1].position,
        script=script,
        position=position_of(interview, cipher),
        answer=turns[-1].text,
        seconds=seconds,
        exchanges=[Exchange(t.speaker, t.text) for t in turns],
        mode=mode,
        summaries=summaries,
    )


def preview(
    session: Session, services: DecidingServices, interview: InterviewSession, text: str, seconds: float,
    cipher: Cipher | None = None,
) -> Pending | None:  # fmt: skip
    """What the turn would hand the decision for this spoken answer (or the start of it, or none yet),
    storing nothing; None when an earlier answer still waits for its reply (the decision ahead would
    not be the one made). ``cipher``: the participant's, if the request has unwrapped it already."""
    if cipher is None:
        _, cipher = cipher_of(session, services, interview)
    turns = load_turns(session, interview.transcript_id, cipher)
    if not turns or turns[-1].speaker == "participant":
        return None
    answer = TurnText(turns[-1].position + 1, "participant", " ".join(text.split()))
    return pending(interview, cipher, script_of(interview), [*turns, answer], seconds, "audio", services.summaries)


def decide_with(chat: ChatModel, work: Pending) -> Step:
    """The interviewer's next turn after the pending answer, with this chat model: the model's call,
    outside any transaction."""
    return Interviewer(work.script, chat, summaries=work.summaries).respond(work.position, work.answer, work.seconds,
                                                                           work.exchanges)  # fmt: skip


def warm(
    session: Session, services: DecidingServices, interview: InterviewSession, spoken: str, cipher: Cipher | None = None
) -> None:
    """Send the decision's prompt up to ``spoken`` (what the person has said so far; nothing yet, before
    they speak) to the model's cache (``SpeculativeChat.warm``); a model without a cache is left alone.
    ``cipher``: the participant's, if the request has unwrapped it already."""
    chat = services.chat
    if not isinstance(chat, SpeculativeChat):
        return
    pending = preview(session, services, interview, spoken, 0.0, cipher)
    if pending is None:
        return
    messages = Interviewer(pending.script, chat).answer_so_far(pending.position, pending.exchanges, pending.answer)
    if messages is not None:
        chat.warm(messages)
