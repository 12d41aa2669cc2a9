"""A turn of the interview, with one owner: each chunk of a spoken answer received and heard, the
participant's answer stored, the interviewer's decision made with no transaction open, its reply stored
under the interview's lock.

``InterviewTurn`` is made per request (the HTTP routes) or per answer (the terminal interview, the
benchmarks, the tests: they all take this path, there is no other). It loads the participant and
unwraps their key once, and decrypts the transcript once, when first needed (a chunk never needs it).
A chunk (``receive_chunk``) is stored and heard in the caller's transaction; each answer runs three steps:

1. in the caller's transaction, the interview locked by the caller: the answer is stored (typed, or
   spoken and transcribed; a resume stores nothing new), and that transaction is committed, so the
   answer is safe and the interview's lock free while the model thinks;
2. with no transaction open: the interviewer's model decides (``replies``);
3. in a transaction of its own, the interview locked again and waited for (an answer stored must get
   its reply, not fail): the reply and the new position are stored, unless the interview has moved
   on meanwhile (another request replied first).

A crash between 1 and 3 leaves an answer without its reply: the state says so (``awaiting_reply``),
a new answer is refused until then (``ReplyPendingError``) and a resume replies to it, so the answer,
once acknowledged, is never lost and never asked for again. The notes on the answer are not part of
the turn: they follow the reply, off the person's wait (``notes``).

The turn keeps what it loaded and passes it down (the interview's row, the cipher, the script's
questions, the transcript), so one request's walk goes down once and does not come back here for what it
had already read.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.building.transcripts import TurnText, load_turns
from agentbank.core.errors import ConflictError, InvalidRequestError, NotFoundError
from agentbank.core.statuses import InterviewStatus, move
from agentbank.db.models import InterviewSession, Participant, Turn
from agentbank.keys.crypto import Cipher, DataKeyDestroyedError
from interviewer.deciding import replies
from interviewer.deciding.interviewer import Interviewer, Step
from interviewer.hearing import recordings
from interviewer.hearing.turn_end import TurnTaking
from interviewer.services import Services
from interviewer.session.interviews import (
    MAX_ANSWER_CHARS,
    MAX_TEXT_ANSWER_S,
    InterviewState,
    ReplyPendingError,
    Transactions,
    require_active,
)
from interviewer.session.script import Question
from interviewer.session.transcripts import add_turn, state_from, state_of


class InterviewTurn:
    """One turn of one participant's interview; ``load`` it in the caller's transaction, the interview
    locked there, then call one of ``answer``, ``answer_spoken`` or ``resume`` once.

    That call ends the caller's transaction (step 1 is committed before the model decides) and opens
    its own for the reply through ``transactions``; it returns where the interview stands afterwards.
    """

    def __init__(self, session: Session, services: Services, transactions: Transactions, interview: InterviewSession,
                 participant: Participant, cipher: Cipher) -> None:  # fmt: skip
        self.session, self.services, self.transactions = session, services, transactions
        self.interview, self.participant_id = interview, participant.id
        self.actor = audit.Actor("participant", participant.pseudonym)  # as the participant's principal is named
        self.cipher = cipher
        self._turns: list[TurnText] | None = None
        # The script exactly as it was when the interview began, and the one interviewer that decides on it.
        self.interviewer = Interviewer.of_snapshot(interview.script, services.chat, services.summaries)
        self.script, self.questions = self.interviewer.script, self.interviewer.questions
        self._pending: replies.Pending | None = None

    @classmethod
    def load(cls, session: Session, services: Services, interview: InterviewSession,
             transactions: Transactions) -> InterviewTurn:  # fmt: skip
        """The turn of ``interview`` (locked in ``session`` by the caller), its participant's key unwrapped once."""
        participant = session.get_one(Participant, interview.participant_id)
        cipher = services.keys.cipher(participant.id, participant.wrapped_key)
        return cls(session, services, transactions, interview, participant, cipher)

    @property
    def turns(self) -> list[TurnText]:
        """The transcript so far, decrypted once, when first needed."""
        if self._turns is None:
            self._turns = load_turns(self.session, self.interview.transcript_id, self.cipher)
        return self._turns

    def receive_chunk(self, turn: int, seq: int, data: bytes, *, take: int | None, max_bytes: int,
                      taking: TurnTaking) -> recordings.ReceivedChunk:  # fmt: skip
        """Store chunk ``seq`` of recording ``take`` of the answer for position ``turn``, and hear it: whether
        the audio so far ends the person's turn (``recordings.end_of_turn``). The transcript is not read."""
        return recordings.receive(self.session, self.services, self.interview, self.cipher, turn, seq, data,
                                  take=take, max_bytes=max_bytes, taking=taking, question=self._question())  # fmt: skip

    def _question(self) -> Question | None:
        """The scripted question under discussion (its follow-ups are asked under it); None once they are over."""
        index = self.interview.question_index
        return self.questions[index][1] if index < len(self.questions) else None

    def state(self) -> InterviewState:
        """Where the interview stands, from what the turn has loaded."""
        return state_from(self.interview, self.questions, self.turns)

    def answer(self, text: str, *, seconds: float | None = None) -> InterviewState:
        """A typed answer and the interviewer's reply. ``seconds`` is how long it took; by default it is
        timed from the moment the interviewer's turn was shown, capped."""
        self._expect_answer()
        if seconds is None:
            waited = (self.services.clock() - self.interview.updated_at).total_seconds()
            seconds = min(max(waited, 0.0), MAX_TEXT_ANSWER_S)
        self._store_answer(text, seconds, "text")
        return self._reply()

    def answer_spoken(self, turn: int, *, take: int | None = None) -> InterviewState:
        """The spoken answer recorded for transcript position ``turn`` (recording ``take``), transcribed
        where the spans heard while it was spoken stop, and the interviewer's reply."""
        self._expect_answer()
        if turn != self.turns[-1].position + 1:
            raise ConflictError(f"turn {turn} is not the answer being recorded")
        question = self._question()
        try:
            heard = recordings.hear(self.session, self.services, self.interview, self.cipher, turn, take=take,
                                    context=None if question is None else question.text)  # fmt: skip
        except recordings.NoSpeechError:
            # An empty transcription is counted for the study's quality view (a microphone to check), and
            # kept though the answer is refused: this turn owns the caller's transaction (see ``_reply``).
            self.interview.audio_flags += 1
            self.session.commit()
            raise
        details = {"turn": turn, "chunks": heard.chunks, "seconds": round(heard.recording_s, 1), "ahead": heard.ahead}
        self._audit(self.session, "interview.audio_turn", details)
        self.interview.audio_flags += heard.poor  # counted for the study's quality view, never the words
        self._store_answer(heard.text, heard.seconds, "audio")
        return self._reply()

    def resume(self) -> InterviewState:
        """Resume a paused interview (the time away counts against no question); an answer a crash left
        without its reply gets it now."""
        if self.interview.status not in (InterviewStatus.PAUSED, InterviewStatus.ACTIVE):
            raise ConflictError(f"an interview that is {self.interview.status} cannot be resumed")
        # The clock restarts here, so a typed answer is not charged for the pause.
        self.interview.status, self.interview.updated_at = InterviewStatus.ACTIVE, self.services.clock()
        self._audit(self.session, "interview.resume")
        if self.turns[-1].speaker == "participant":  # its length is not known any more: no time is charged
            self._pending = replies.pending(self.interview, self.cipher, self.script, self.turns, 0.0, "resume",
                                            self.services.summaries)  # fmt: skip
        return self._reply()

    def _expect_answer(self) -> None:
        require_active(self.interview)
        if self.turns[-1].speaker == "participant":
            raise ReplyPendingError("the last answer is still waiting for the interviewer's reply; resume first")

    def _store_answer(self, text: str, seconds: float, mode: str) -> None:
        text = " ".join(text.split())  # as a decision made ahead saw it (``replies.preview``)
        if not text:
            raise InvalidRequestError("the answer is empty")
        if len(text) > MAX_ANSWER_CHARS:
            raise InvalidRequestError(f"the answer is longer than {MAX_ANSWER_CHARS} characters; send it in parts")
        now = self.services.clock()
        position = self.turns[-1].position + 1
        add_turn(self.session, self.interview.transcript_id, position, "participant", text, self.cipher,
                 now - timedelta(seconds=seconds), now)  # fmt: skip
        self.turns.append(TurnText(position, "participant", text))
        # Counts for the study's quality view, kept now so that view never opens the transcript.
        self.interview.answers_given += 1
        self.interview.answer_words += len(text.split())
        self._pending = replies.pending(self.interview, self.cipher, self.script, self.turns, seconds, mode,
                                        self.services.summaries)  # fmt: skip

    def _reply(self) -> InterviewState:
        """Steps 2 and 3: step 1 committed, the decision, then the reply stored; where the interview stands."""
        work = self._pending
        self.session.commit()  # the answer is safe now, and the interview's lock free while the model thinks
        if work is None:
            return self.state()
        # The decision the one made ahead (``replies.decide_with``) would be: same interviewer, same input.
        step = self.interviewer.respond(work.position, work.answer, work.seconds, work.exchanges)
        with self.transactions() as session:
            # This interview's row, locked again; waited for, since the answer stored must get its reply.
            interview = session.get(InterviewSession, self.interview.id, with_for_update=True, populate_existing=True)
            if interview is None:
                raise NotFoundError("there is no interview for this participant")
            if not self._store_reply(session, interview, work, step):
                return state_of(session, self.services, interview)  # moved on meanwhile: read it again
            return self.state()

    def _store_reply(self, session: Session, interview: InterviewSession, work: replies.Pending, step: Step) -> bool:
        """Store the reply and the new position; False when the answer has a reply already."""
        last = session.execute(
            select(Turn.position, Turn.speaker)
            .where(Turn.transcript_id == interview.transcript_id)
            .order_by(Turn.position.desc())
            .limit(1)
        ).first()
        if last is None or tuple(last) != (work.answer_position, "participant"):
            return False  # another request replied to this answer first
        if session.scalar(select(Participant.wrapped_key).where(Participant.id == self.participant_id)) is None:
            raise DataKeyDestroyedError("this participant withdrew; their data no longer exists")
        now = self.services.clock()
        position = work.answer_position + 1
        add_turn(session, interview.transcript_id, position, "interviewer", step.text, self.cipher, now, now)
        interview.question_index = step.position.index
        interview.follow_ups = step.position.follow_ups
        interview.seconds_used = step.position.seconds_used
        interview.reflecting = step.position.reflecting
        interview.follow_ups_asked += step.action == "follow_up"
        # No notes: a step never changes them, and notes taken meanwhile (``notes``) must stay.
        interview.updated_at = now
        if step.action == "closing":
            interview.status = move(interview.status, InterviewStatus.REVIEW, "the interview")
        session.flush()
        details = {"turn": work.answer_position, "next": step.action, "mode": work.mode}
        self._audit(session, "interview.answer", details)
        self.interview = interview
        self.turns.append(TurnText(position, "interviewer", step.text))
        return True

    def _audit(self, session: Session, action: str, details: dict[str, Any] | None = None) -> None:
        audit.record(session, self.actor, action, Tier.PARTICIPANT, participant_id=self.participant_id, details=details)
