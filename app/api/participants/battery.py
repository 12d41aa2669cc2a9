"""The participant's own survey (the battery) and its retest: read where one stands, answer one question
at a time (each answer stored as it is given), close a wave. Only the signed-in participant, only their own."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from agentbank.keys.crypto import KeyRing
from agentbank.participants.battery import answers, battery_of, retest_after
from agentbank.participants.battery.answers import BatteryState
from agentbank.participants.battery.contents import BatteryItem, Page
from agentbank.studies import completion
from agentbank.studies.completion import Ending
from app.api.deps import BankDep, PrincipalDep, SessionDep, actor
from app.api.participants.router import ParticipantId
from app.api.types import FiniteFloat

router = APIRouter(prefix="/v1/participant/battery", tags=["participants"])

Wave = Literal[1, 2]


class OptionRead(BaseModel):
    code: int
    label: str


class QuestionRead(BaseModel):
    key: str = Field(description="instrument:item, e.g. gss:cappun")
    kind: Literal["categorical", "ordinal", "numeric"]
    question: str
    options: list[OptionRead]
    minimum: float | None = None
    maximum: float | None = None


class PageRead(BaseModel):
    section: Literal["about", "gss", "big_five", "games"]
    title: str
    preamble: str
    questions: list[QuestionRead]


class BatteryRead(BaseModel):
    wave: Wave | None = Field(description="The wave to answer now; null when none is open")
    status: Literal["not_started", "open", "scheduled", "complete"]
    retest_due: datetime | None = Field(description="From when the retest (wave 2) is offered")
    completed: dict[str, datetime] = Field(description="When each finished wave was completed, by wave")
    answered: int
    total: int
    pages: list[PageRead]
    answers: dict[str, float | None] = Field(description="The answers given so far in this wave; null: declined")
    completion_url: str | None = Field(
        default=None, description="Once the retest is done: where the study's panel takes the participant back"
    )
    reminder_offered: bool = Field(
        default=False, description="Whether one may leave an address for the retest's reminder (a study's participant)"
    )


class AnswerWrite(BaseModel):
    wave: Wave
    value: FiniteFloat | None = Field(description="The option's code, or the number; null: prefer not to say")


class CompleteWrite(BaseModel):
    wave: Wave


def _question(entry: BatteryItem) -> QuestionRead:
    item = entry.item
    options = [OptionRead(code=o.code, label=o.label) for o in item.options]
    return QuestionRead(
        key=entry.key, kind=item.kind, question=item.question, options=options,  # type: ignore[arg-type]
        minimum=item.minimum, maximum=item.maximum,
    )  # fmt: skip


def _page(page: Page) -> PageRead:
    questions = [_question(e) for e in page.items]
    return PageRead(section=page.section, title=page.title, preamble=page.preamble, questions=questions)  # type: ignore[arg-type]


def _read(state: BatteryState, session: Session, keys: KeyRing, participant_id: uuid.UUID) -> BatteryRead:
    pages = [_page(page) for page in state.pages]
    # The retest's end, for a study's panel: its own completion, separate from the interview's.
    done = completion.completion_url(session, keys, participant_id, Ending.RETEST) if 2 in state.completed else None
    offered = state.status == "scheduled" and completion.study_of(session, participant_id) is not None
    return BatteryRead(
        wave=state.wave, status=state.status, retest_due=state.due_at,  # type: ignore[arg-type]
        completed={str(k): v for k, v in state.completed.items()}, answered=state.answered, total=state.total,
        pages=pages, answers=dict(state.answers), completion_url=done, reminder_offered=offered,
    )  # fmt: skip


@router.get("", response_model=BatteryRead)
def read(session: SessionDep, principal: PrincipalDep, participant_id: ParticipantId, bank: BankDep) -> BatteryRead:
    """Where one stands: the wave to answer now, its questions page by page, and the answers given so far."""
    now = datetime.now(UTC)
    state = answers.state(session, bank.keys, participant_id, battery_of(bank.settings), now, actor=actor(principal))
    return _read(state, session, bank.keys, participant_id)


@router.put("/answers/{key}", status_code=204)
def answer(
    key: str, body: AnswerWrite, session: SessionDep, principal: PrincipalDep, participant_id: ParticipantId,
    bank: BankDep,
) -> None:  # fmt: skip
    """Give (or change) one answer of the open wave; it is kept at once."""
    answers.save_answer(session, bank.keys, participant_id, battery_of(bank.settings), body.wave, key, body.value,
                        datetime.now(UTC), actor=actor(principal))  # fmt: skip


@router.post("/complete", response_model=BatteryRead)
def complete(
    body: CompleteWrite, session: SessionDep, principal: PrincipalDep, participant_id: ParticipantId, bank: BankDep
) -> BatteryRead:
    """Close the open wave once every question is answered or declined; the first schedules the retest."""
    settings = bank.settings
    state = answers.complete(session, bank.keys, participant_id, battery_of(settings), body.wave, datetime.now(UTC),
                             retest_after(settings), actor=actor(principal))  # fmt: skip
    return _read(state, session, bank.keys, participant_id)
