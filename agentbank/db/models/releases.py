"""Releases of the open tier: frozen snapshots of the population's answers, and the tables cut from them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer, String, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.db.base import Base


class Release(Base):
    """One frozen population: the open tier answers only from the newest release."""

    __tablename__ = "releases"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    cut_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    agents: Mapped[int] = mapped_column(Integer)
    joined: Mapped[int] = mapped_column(Integer)
    left: Mapped[int] = mapped_column(Integer)
    k: Mapped[int] = mapped_column(Integer)
    cut_by: Mapped[str] = mapped_column(String(100))
    # The breakdowns its profiles hold, in order: a breakdown added later shows from the next release on.
    dimensions: Mapped[list[str]] = mapped_column(JSONB)
    # One post-stratification weight per cell of the raked breakdowns, or why there are none.
    weights: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)


class ReleaseMember(Base):
    """An agent counted in a release: kept for the newest release only, to count who joined, left or changed."""

    __tablename__ = "release_members"

    release_id: Mapped[int] = mapped_column(ForeignKey("releases.id", ondelete="CASCADE"), primary_key=True)
    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id"), primary_key=True)
    # A digest of the agent's coded answers, so a member whose answers changed counts as a change.
    answers_digest: Mapped[str] = mapped_column(String(32))


class ReleaseCount(Base):
    """How many members of a release in one demographic cell gave ``code`` to an item (no agent ids)."""

    __tablename__ = "release_counts"

    release_id: Mapped[int] = mapped_column(ForeignKey("releases.id", ondelete="CASCADE"), primary_key=True)
    instrument: Mapped[str] = mapped_column(String(32), primary_key=True)
    item: Mapped[str] = mapped_column(String(64), primary_key=True)
    # The member's category in every breakdown, in the order of ``breakdowns.BREAKDOWNS``.
    cell: Mapped[list[str]] = mapped_column(JSONB, primary_key=True)
    code: Mapped[int] = mapped_column(Integer, primary_key=True)
    count: Mapped[int] = mapped_column(Integer)


class ReleaseTable(Base):
    """A protected table of a release, computed once off the request path and served as stored."""

    __tablename__ = "release_tables"

    release_id: Mapped[int] = mapped_column(ForeignKey("releases.id", ondelete="CASCADE"), primary_key=True)
    instrument: Mapped[str] = mapped_column(String(32), primary_key=True)
    item: Mapped[str] = mapped_column(String(64), primary_key=True)
    breakdowns: Mapped[str] = mapped_column(String(80), primary_key=True)
    released: Mapped[dict[str, Any]] = mapped_column(JSONB)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
