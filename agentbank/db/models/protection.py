"""Protection of participants: answers withheld by the output check, and notices for teams."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Index, Integer, String, Text, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.core.statuses import StatusColumn, WithheldStatus
from agentbank.db.base import Base


class WithheldAnswer(Base):
    """An individual answer the output check held back, waiting for (or after) a reviewer's decision.

    The answer itself stays in ``answers``, sealed with the participant's key; this row says only
    which answer, for which job, and which tests it failed (never the matched text).
    """

    __tablename__ = "withheld_answers"
    __table_args__ = (Index("ix_withheld_answers_status", "status", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    job_result_id: Mapped[int] = mapped_column(ForeignKey("job_results.id"), index=True)
    job_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("jobs.id"))
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id"))
    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id"), index=True)
    answer_id: Mapped[int] = mapped_column(Integer)
    position: Mapped[int] = mapped_column(Integer)  # the answer's place in the job result
    reasons: Mapped[list[str]] = mapped_column(JSONB, default=list)  # verbatim | canary | deny_list
    status: Mapped[WithheldStatus] = mapped_column(StatusColumn(WithheldStatus), default=WithheldStatus.PENDING)
    decided_by: Mapped[str | None] = mapped_column(String(100))
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class OutboxEvent(Base):
    """A message to deliver outside the bank (a team's notice), written in the transaction that caused it."""

    __tablename__ = "outbox"
    __table_args__ = (Index("ix_outbox_undelivered", "delivered_at", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    topic: Mapped[str] = mapped_column(String(64))
    project_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("projects.id"))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
