"""Model endpoints as the bank uses them: the limits every process shares, and batches sent to them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, Integer, String, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.core.statuses import BatchStatus, StatusColumn
from agentbank.db.base import Base


class CallLimit(Base):
    """One limited quantity of one endpoint (its requests, or its tokens) and its theoretical arrival
    time: the moment up to which the allowance is already spent (the generic cell rate algorithm)."""

    __tablename__ = "call_limits"

    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    tat: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ModelBatch(Base):
    """Population answers asked through a provider's Batch API: what was asked of whom, and how it ended.

    Nothing of a participant is kept here: the requests went to the provider and are rebuilt from the
    agents when the answers are collected."""

    __tablename__ = "model_batches"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    status: Mapped[BatchStatus] = mapped_column(StatusColumn(BatchStatus), default=BatchStatus.SUBMITTED)
    provider_batch_id: Mapped[str | None] = mapped_column(String(200))  # None: everything was already cached
    provider_status: Mapped[str | None] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    instrument: Mapped[str] = mapped_column(String(32))
    items: Mapped[list[str]] = mapped_column(JSONB)
    agent_ids: Mapped[list[str]] = mapped_column(JSONB)
    requests: Mapped[int] = mapped_column(Integer)
    answered: Mapped[int] = mapped_column(Integer, default=0)  # agents whose answers were released
    failed: Mapped[int] = mapped_column(Integer, default=0)  # agents with a request the provider did not answer
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
