"""The transcript's turns as the session stores and reads them: a turn sealed with the participant's key, and
where the interview stands worked out from what is loaded (the turn in progress, in ``turns``, has it
loaded already; the session's other uses read it here).
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy.orm import Session

from agentbank.building.transcripts import TurnText, load_turns
from agentbank.core.statuses import InterviewStatus
from agentbank.db.models import InterviewSession, Participant, Turn
from agentbank.keys.crypto import Cipher
from interviewer.session.interviews import InterviewState, SessionServices
from interviewer.session.script import Module, Question, Script


def state_of(session: Session, services: SessionServices, interview: InterviewSession) -> InterviewState:
    """Where the interview stands, read from the database (a turn in progress knows it already)."""
    participant = session.get_one(Participant, interview.participant_id)
    cipher = services.keys.cipher(participant.id, participant.wrapped_key)
    questions = Script.model_validate(interview.script).questions()
    return state_from(interview, questions, load_turns(session, interview.transcript_id, cipher))


def state_from(interview: InterviewSession, questions: list[tuple[Module, Question]],
               turns: list[TurnText]) -> InterviewState:  # fmt: skip
    """Status, the interviewer's last words, the current question and progress, from what is loaded."""
    total = len(questions)
    last_words = next((t.text for t in reversed(turns) if t.speaker == "interviewer"), "")
    done = interview.status in (InterviewStatus.REVIEW, InterviewStatus.FINISHED)
    # While the interviewer waits for the answer to its summary, the person is still in the module just ended.
    at = interview.question_index - 1 if interview.reflecting else interview.question_index
    asked = questions[at] if 0 <= at < total else None
    module, question = asked if asked and not done else (None, None)
    return InterviewState(
        status=interview.status,
        turn=(turns[-1].position if turns else 0) + 1,
        prompt=last_words,
        question=question.text if question else None,
        question_key=question.key if question else None,
        module=module.key if module else None,
        module_title=module.title if module else None,
        index=min(at + 1, total),
        total=total,
        seconds_used=round(interview.seconds_used.get(question.key, 0.0), 1) if question else 0.0,
        seconds_budget=question.seconds if question else 0,
        progress=100 if done else round(100 * interview.question_index / total),
        awaiting_reply=bool(turns) and turns[-1].speaker == "participant",
    )


def add_turn(session: Session, transcript_id: uuid.UUID, position: int, speaker: str, text: str, cipher: Cipher,
             started: datetime, ended: datetime) -> None:  # fmt: skip
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
