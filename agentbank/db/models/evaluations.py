"""Report cards: how well each agent predicted its own participant, from evaluation runs."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import DateTime, Float, ForeignKey, Integer, String, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.db.base import Base


class ReportCard(Base):
    """One agent's accuracy on one instrument in one evaluation run, normalized by the person's retest."""

    __tablename__ = "report_cards"
    __table_args__ = (UniqueConstraint("agent_id", "instrument", "run_id", "condition"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id"), index=True)
    instrument: Mapped[str] = mapped_column(String(64))
    run_id: Mapped[str] = mapped_column(String(120))
    condition: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    prompt_version: Mapped[str] = mapped_column(String(64))
    items: Mapped[int] = mapped_column(Integer)
    accuracy: Mapped[float] = mapped_column(Float)
    self_consistency: Mapped[float] = mapped_column(Float)
    normalized_accuracy: Mapped[float | None] = mapped_column(Float)
    # A 95% interval of the normalized accuracy over the agent's items (bootstrap).
    normalized_low: Mapped[float | None] = mapped_column(Float)
    normalized_high: Mapped[float | None] = mapped_column(Float)
    # The run's best non-LLM baseline, scored on the same person and items.
    baseline: Mapped[str | None] = mapped_column(String(32))
    baseline_normalized: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ItemValidity(Base):
    """How well the bank's interview agents answered one item against their own people, in one run:
    the open tier shows the newest beside the item's distribution."""

    __tablename__ = "item_validity"
    __table_args__ = (UniqueConstraint("instrument", "item", "run_id"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    instrument: Mapped[str] = mapped_column(String(64))
    item: Mapped[str] = mapped_column(String(64))
    run_id: Mapped[str] = mapped_column(String(120))
    model: Mapped[str] = mapped_column(String(200))
    agents: Mapped[int] = mapped_column(Integer)  # people scored on the item
    accuracy: Mapped[float] = mapped_column(Float)  # share answered as the person did in wave 1
    retest: Mapped[float] = mapped_column(Float)  # share the people repeated themselves
    normalized_accuracy: Mapped[float | None] = mapped_column(Float)
    baseline: Mapped[str | None] = mapped_column(String(32))  # the run's best non-LLM baseline
    baseline_accuracy: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
