"""Answers: what an agent said, with full provenance; the cache of identical requests."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, Float, ForeignKey, Integer, LargeBinary, String, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.db.base import Base


class AnswerRecord(Base):
    """One answer. The payload (value, rationale, cited turns) is sealed with the participant's key."""

    __tablename__ = "answers"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    # sha256 of every part that can change the answer; identical requests are served from here.
    cache_key: Mapped[str] = mapped_column(String(64), unique=True)
    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id"), index=True)
    agent_version: Mapped[int] = mapped_column(Integer)
    item_id: Mapped[int | None] = mapped_column(ForeignKey("items.id"))
    item_version: Mapped[str | None] = mapped_column(String(16))
    question_sha256: Mapped[str | None] = mapped_column(String(64))  # open-ended questions
    condition: Mapped[str] = mapped_column(String(16))
    condition_params: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    model: Mapped[str] = mapped_column(String(200))
    prompt_version: Mapped[str] = mapped_column(String(32))
    sampling: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    seed: Mapped[int | None] = mapped_column(Integer)
    payload_encrypted: Mapped[bytes] = mapped_column(LargeBinary)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cached_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
