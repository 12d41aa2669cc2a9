"""Notes on the person, taken after the interviewer has replied, so that nobody waits for them.

The notes are the interviewer's memory of facts beyond the transcript window its model sees. Taking
them is a model call of its own, made once the turn's reply is stored (``after_reply``: the HTTP routes
start it in the background, a little after the reply so that the reply's first words are synthesized
first), in three steps like the turn itself (``turns``): what is due is read in one transaction, the
model is called in none, and the notes are stored in another with the interview locked.

``notes_through`` says up to which answer the notes were taken. A crash, a failed call or a reply
stored by a resume, or a person who began to answer before the notes could start, leaves later answers
due; the next call notes them (the oldest few, the rest by the calls after), so no answer's facts are
skipped for good and none is noted twice.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from agentbank.building.transcripts import load_turns
from agentbank.core.errors import AgentBankError
from agentbank.core.statuses import InterviewStatus
from agentbank.db.models import InterviewSession
from agentbank.providers.chat import ChatModel
from interviewer.deciding import replies
from interviewer.deciding.interviewer import Exchange, Interviewer
from interviewer.deciding.speculation import SpeculativeChat
from interviewer.session import interviews
from interviewer.session.interviews import Transactions

logger = logging.getLogger(__name__)

# The answers a call notes at most when several are due (after a crash, or notes put off while the person
# spoke): the prompt stays small, and the next calls take the rest.
MAX_ANSWERS = 3
# Seconds between the reply being stored and its notes being taken by a server: the page asks for the
# reply's first sentence at once, and its synthesis should have the cores to itself.
AFTER_REPLY_S = 2.0
_NOTED = (InterviewStatus.ACTIVE, InterviewStatus.PAUSED)


@dataclass(frozen=True)
class Due:
    """Answers waiting for their notes, with what the notes call needs."""

    participant_id: uuid.UUID
    interviewer: Interviewer
    notes_through: int  # as read: notes are stored only if nobody moved it meanwhile
    last: int  # the position of the newest answer noted
    notes: tuple[str, ...]
    answers: list[str]
    exchanges: list[Exchange]


def due(
    session: Session, services: replies.DecidingServices, interview: InterviewSession, chat: ChatModel | None = None
) -> Due | None:
    """The answers after ``notes_through`` (the oldest few: a longer wait is taken a few at a time, so that
    none is skipped), or None when none is due."""
    if interview.status not in _NOTED:
        return None
    participant, cipher = interviews.cipher_of(session, services, interview)
    turns = load_turns(session, interview.transcript_id, cipher)
    answers = [t for t in turns if t.speaker == "participant" and t.position > interview.notes_through]
    if not answers:
        return None
    return Due(
        participant_id=participant.id,
        interviewer=Interviewer(interviews.script_of(interview), chat or services.chat),
        notes_through=interview.notes_through,
        last=answers[:MAX_ANSWERS][-1].position,
        notes=replies.position_of(interview, cipher).notes,
        answers=[t.text for t in answers[:MAX_ANSWERS]],
        exchanges=[Exchange(t.speaker, t.text) for t in turns],
    )


def take(work: Due) -> tuple[str, ...]:
    """The notes with what the due answers revealed: the model's call, outside any transaction."""
    return work.interviewer.take_notes(work.notes, work.answers, work.exchanges)


def store(
    session: Session, services: replies.DecidingServices, interview: InterviewSession, work: Due, notes: tuple[str, ...]
) -> bool:
    """Keep the notes (the interview locked by the caller); False when another call noted these answers
    first or the interview has ended meanwhile."""
    if interview.notes_through != work.notes_through or interview.status not in _NOTED:
        return False
    _, cipher = interviews.cipher_of(session, services, interview)
    interview.notes_encrypted = cipher.seal("\n".join(notes)) if notes else None
    interview.notes_through = work.last
    session.flush()
    return True


def take_due(transactions: Transactions, services: replies.DecidingServices, participant_id: uuid.UUID,
             chat: ChatModel | None = None) -> bool:  # fmt: skip
    """Take the participant's due notes in three steps, each transaction its own; True when stored.
    Never raises: notes are an aid to the interviewer, and a failure leaves them due for the next call."""
    try:
        with transactions() as session:
            work = due(session, services, interviews.current(session, participant_id), chat)
        if work is None:
            return False
        notes = take(work)
        with transactions() as session:
            interview = interviews.current(session, participant_id, lock=True, wait=True)
            return store(session, services, interview, work, notes)
    except (AgentBankError, SQLAlchemyError) as exc:  # withdrawn meanwhile, the interview gone, a lost server
        # The error's kind only: a message could quote what was being stored.
        logger.info("interview notes not taken (%s); they stay due", type(exc).__name__)
        return False


def after_reply(transactions: Transactions, services: replies.DecidingServices, participant_id: uuid.UUID) -> None:
    """What follows a reply, off the person's wait: the notes on the answer, then the next decision's
    prompt up to the answer read into the model's cache (notes and question included), so that even a
    short answer leaves the decision little to read. A server's interviewer (``SpeculativeChat``) does
    both in its own queue ``AFTER_REPLY_S`` later, behind or before any decision made ahead, so the model
    has one call at a time; once the person has begun to speak, the notes wait for the next reply
    (``SpeculativeChat.person_speaking``). Any other model (tests) takes the notes now."""
    chat = services.chat
    if not isinstance(chat, SpeculativeChat):
        take_due(transactions, services, participant_id)
        return

    def notes_then_warm(model: ChatModel, person_speaking: bool) -> None:
        # A person who begins to answer before the notes could start would wait for them: on the embedded
        # model they took 6-11 s beside Whisper on two cores, so that the words of the answer's pauses came
        # late, no decision started ahead, and the next question came 4-10 s after the end of the turn.
        # They stay due and are taken after the next reply; the warm-up, which that answer's decision
        # reads, goes now.
        if not person_speaking:
            take_due(transactions, services, participant_id, model)
        with transactions() as session:
            replies.warm(session, services, interviews.current(session, participant_id), "")

    chat.later(notes_then_warm, AFTER_REPLY_S)
