"""Failed attempts of agent builds, kept so that an operator sees why a build did not finish."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, DateTime, ForeignKey, Integer, String, Text, func
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.db.base import Base


class BuildFailure(Base):
    """One failed attempt of one queued build: the error and its hint (never participant data)."""

    __tablename__ = "build_failures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    participant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("participants.id", ondelete="CASCADE"), index=True)
    # The queue's task id; the queue's own table is not ours, so no foreign key.
    task_id: Mapped[int] = mapped_column(BigInteger, index=True)
    attempt: Mapped[int] = mapped_column(Integer)
    error: Mapped[str] = mapped_column(String(100))
    reason: Mapped[str] = mapped_column(Text)
    hint: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
