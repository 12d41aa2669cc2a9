"""Releases of the open tier: tables protected once, when a release is cut, and the privacy each cost.

Nothing here holds a row per person: a release keeps its protected tables and validity figures, the
parameters of the noise that protects them, and a digest that says whether anything changed since.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import BigInteger, Date, DateTime, Float, ForeignKey, Integer, String, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.db.base import Base


class Release(Base):
    """One release: the open tier answers only from the newest. Kept after it is superseded (without its
    tables), as the ledger of what every release cost its members' privacy."""

    __tablename__ = "releases"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    cut_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    agents: Mapped[int] = mapped_column(Integer)  # the members, counted with the release's noise
    k: Mapped[int] = mapped_column(Integer)
    cut_by: Mapped[str] = mapped_column(String(100))
    # The breakdowns its tables hold, in order: a breakdown added later shows from the next release on.
    dimensions: Mapped[list[str]] = mapped_column(JSONB)
    # How its weights were made (from its protected margins), or why there are none.
    weights: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)
    # The mechanism, its noise scales and what it cost: mu per answer, rho per answer and per person.
    privacy: Mapped[dict[str, Any]] = mapped_column(JSONB)
    mu: Mapped[float] = mapped_column(Float)
    # A digest of the members and their sealed data (ciphertexts, which say nothing): equal, nothing changed.
    state_digest: Mapped[str] = mapped_column(String(64))
    # The sha256 of its published manifest (``open_tier.publication``); null until its files are written.
    manifest_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)


class ReleaseTable(Base):
    """A protected table of a release, computed when the release was cut and served as stored."""

    __tablename__ = "release_tables"

    release_id: Mapped[int] = mapped_column(ForeignKey("releases.id", ondelete="CASCADE"), primary_key=True)
    instrument: Mapped[str] = mapped_column(String(32), primary_key=True)
    item: Mapped[str] = mapped_column(String(64), primary_key=True)
    breakdowns: Mapped[str] = mapped_column(String(80), primary_key=True)
    released: Mapped[dict[str, Any]] = mapped_column(JSONB)


class ReleaseValidity(Base):
    """How well the release's members' agents answered one item against their own people, protected by the
    same mechanism as its tables: counts of people scored, agents right, people who repeated themselves,
    and the best non-LLM baseline right, each with the release's noise."""

    __tablename__ = "release_validity"

    release_id: Mapped[int] = mapped_column(ForeignKey("releases.id", ondelete="CASCADE"), primary_key=True)
    instrument: Mapped[str] = mapped_column(String(32), primary_key=True)
    item: Mapped[str] = mapped_column(String(64), primary_key=True)
    scored: Mapped[int] = mapped_column(Integer)
    right: Mapped[int] = mapped_column(Integer)
    repeated: Mapped[int] = mapped_column(Integer)
    baseline_right: Mapped[int | None] = mapped_column(Integer)
    baseline: Mapped[str | None] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    run_id: Mapped[str] = mapped_column(String(120))
    measured_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class TableRequest(Base):
    """A table a researcher asked for that a release lacked: measured at the next cut from that cut's members
    (with the budget each release reserves for asked tables), then published to everyone. The most recently
    asked tables of an item stay in the releases after it (``open_tier.workload``)."""

    __tablename__ = "table_requests"

    instrument: Mapped[str] = mapped_column(String(32), primary_key=True)
    item: Mapped[str] = mapped_column(String(64), primary_key=True)
    breakdowns: Mapped[str] = mapped_column(String(80), primary_key=True)
    first_asked_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    last_asked_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    asks: Mapped[int] = mapped_column(Integer, default=1)
    # The first release that measured it (null: waiting for the next cut).
    first_release: Mapped[int | None] = mapped_column(Integer, nullable=True)


class OpenRead(Base):
    """The access log of published tables: reads per client and day, counted in memory by each API process and
    added here in batches, so a read opens no transaction (``app.api.open.access_log``)."""

    __tablename__ = "open_reads"

    client_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    reads: Mapped[int] = mapped_column(BigInteger, default=0)
    not_modified: Mapped[int] = mapped_column(BigInteger, default=0)
