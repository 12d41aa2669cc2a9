"""Instruments (GSS, Big Five, economic games) and their items, versioned by content."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.db.base import Base


class InstrumentRecord(Base):
    """One version of an instrument; the version is a hash of its content."""

    __tablename__ = "instruments"
    __table_args__ = (UniqueConstraint("key", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(32))
    version: Mapped[str] = mapped_column(String(16))
    title: Mapped[str] = mapped_column(String(200))
    preamble: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(Text)


class ItemRecord(Base):
    """One item of an instrument version; ``version`` is a hash of its wording, options and bounds."""

    __tablename__ = "items"
    __table_args__ = (UniqueConstraint("instrument_id", "key"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    instrument_id: Mapped[int] = mapped_column(ForeignKey("instruments.id"))
    key: Mapped[str] = mapped_column(String(64))
    version: Mapped[str] = mapped_column(String(16))
    kind: Mapped[str] = mapped_column(String(16))  # categorical | ordinal | numeric | open
    question: Mapped[str] = mapped_column(Text)
    options: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list)
    minimum: Mapped[float | None] = mapped_column(Float)
    maximum: Mapped[float | None] = mapped_column(Float)
    meta: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)


class TeamInstrument(Base):
    """One version of a project's own instrument: its items as JSON (``instruments.team``), never changed
    once written, so the version a reviewer approved is the one a job asks."""

    __tablename__ = "team_instruments"
    __table_args__ = (UniqueConstraint("project_id", "key", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id"))
    key: Mapped[str] = mapped_column(String(24))
    version: Mapped[int] = mapped_column(Integer)
    definition: Mapped[dict[str, Any]] = mapped_column(JSONB)
    digest: Mapped[str] = mapped_column(String(64))  # sha256 of the definition, to tell an upload that changes nothing
    source: Mapped[str] = mapped_column(String(8))  # json | csv | qsf
    not_imported: Mapped[list[str]] = mapped_column(JSONB, default=list)  # what an import left out, and why
    created_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("clients.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
