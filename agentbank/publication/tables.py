"""A release's protected tables and validity figures as stored, written once when it is cut."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from agentbank.db.models import ReleaseTable, ReleaseValidity
from agentbank.publication.protection import ProtectedTable, ProtectedValidity

BATCH = 500


def store_tables(
    session: Session, release_id: int, instrument: str, item: str, tables: Iterable[ProtectedTable]
) -> int:
    """Store an item's protected tables; returns how many."""
    rows = [{"release_id": release_id, "instrument": instrument, "item": item, "breakdowns": ",".join(t.dims),
             "released": t.body} for t in tables]  # fmt: skip
    for start in range(0, len(rows), BATCH):
        session.execute(insert(ReleaseTable), rows[start : start + BATCH])
    return len(rows)


def stored_tables(session: Session, release_id: int, instrument: str, item: str, keys: list[str]) -> dict[str, Any]:
    """A release's stored tables of one item by their breakdowns (``keys``), those that exist."""
    query = select(ReleaseTable.breakdowns, ReleaseTable.released).where(
        ReleaseTable.release_id == release_id, ReleaseTable.instrument == instrument, ReleaseTable.item == item,
        ReleaseTable.breakdowns.in_(keys),
    )  # fmt: skip
    return {key: body for key, body in session.execute(query)}


def store_validity(
    session: Session, release_id: int, instrument: str, figures: Iterable[ProtectedValidity], *,
    baseline: str | None, model: str, run_id: str, measured_at: datetime,
) -> None:  # fmt: skip
    """Store the protected validity figures of a release's items."""
    rows = [{"release_id": release_id, "instrument": instrument, "item": f.item, "scored": f.scored, "right": f.right,
             "repeated": f.repeated, "baseline_right": f.baseline_right, "baseline": baseline, "model": model,
             "run_id": run_id, "measured_at": measured_at} for f in figures]  # fmt: skip
    if rows:
        session.execute(insert(ReleaseValidity), rows)


def stored_validity(session: Session, release_id: int, instrument: str, items: list[str]) -> dict[str, ReleaseValidity]:
    """A release's validity figures of ``items``, those it has."""
    rows = session.scalars(select(ReleaseValidity).where(
        ReleaseValidity.release_id == release_id, ReleaseValidity.instrument == instrument,
        ReleaseValidity.item.in_(items),
    ))  # fmt: skip
    return {row.item: row for row in rows}
