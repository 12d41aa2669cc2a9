"""Bodies of the reviewers' queue: withheld answers and the decisions on them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.api.types import Text


class WithheldRead(BaseModel):
    id: int
    job_id: uuid.UUID
    project_id: uuid.UUID
    agent_id: uuid.UUID
    reasons: list[str] = Field(description="Which tests failed: verbatim, canary, deny_list")
    status: str
    answer: dict[str, Any] | None = Field(
        description="The held answer (value, reason, cited_turns, and `highlights`: the character ranges of the "
        "value and of the reason that repeat a participant's turn, hold the canary or name someone on the "
        "deny-list); null once its participant withdrew"
    )
    created_at: datetime


class WithheldDecisionCreate(BaseModel):
    """A reviewer's decision on one withheld answer (a project's decision is ``ProjectDecisionCreate``)."""

    decision: Literal["release", "keep"]
    note: Text | None = None


class DecisionRead(BaseModel):
    id: int
    status: str
    decided_at: datetime | None
