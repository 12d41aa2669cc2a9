"""Request and response bodies of the interview routes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.api.types import Text


class Consent(BaseModel):
    """The three things a participant agrees to before the interview begins."""

    recording: bool
    use: bool
    withdrawal: bool


class InterviewCreate(BaseModel):
    invite: Text = Field(min_length=8, max_length=200)
    consent: Consent
    panel_ref: Text | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The recruitment panel's id for the person, as the study's link carried it (kept sealed)",
    )
    length: Literal["full", "short"] = Field(
        default="full", description="the whole script, or its short version (each module's first questions)"
    )


class StateRead(BaseModel):
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
    awaiting_reply: bool = Field(
        default=False, description="the last answer has no reply yet (the server stopped); POST .../resume gives it one"
    )


class InterviewStarted(BaseModel):
    token: str
    state: StateRead


class AnswerCreate(BaseModel):
    text: Text = Field(min_length=1, max_length=20_000)


class ChunkRead(BaseModel):
    turn: int
    seq: int
    sha256: str
    acknowledged: bool
    end_of_turn: bool
    # A likely end that has not passed the turn: the page makes a short sound of listening, and goes on recording.
    backchannel: bool = False


class DiscardRead(BaseModel):
    turn: int
    discarded: int


class TurnRead(BaseModel):
    position: int
    speaker: str
    text: str
    module_title: str | None = Field(default=None, description="the part of the interview the turn belongs to")


class RedactionCreate(BaseModel):
    position: int
    text: Text | None = Field(default=None, max_length=20_000)


class FinishCreate(BaseModel):
    redactions: list[RedactionCreate] = Field(default_factory=list, max_length=500)
    confirm: bool


class FinishRead(BaseModel):
    access_code: str
    completion_url: str | None = Field(
        default=None, description="Where the study's panel takes the participant back, with its completion code"
    )


class TakeRead(BaseModel):
    """A new recording of an answer: chunks name this take until the answer ends or is recorded again."""

    turn: int
    take: int
