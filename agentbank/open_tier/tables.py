"""The protected tables of a release as stored: released values, and weighted totals beside them."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.db.models import Release, ReleaseTable
from agentbank.open_tier.distributions import Released
from agentbank.open_tier.weighting.estimates import WeightedTable
from agentbank.open_tier.weighting.releases import weighted_totals


def store_table(
    session: Session,
    release: Release,
    instrument: str,
    item: str,
    dims: tuple[str, ...],
    table: Released,
    counts: dict[tuple[tuple[str, ...], int], int],
) -> None:
    """Store a protected table, with its weighted totals beside it."""
    encoded = [[list(group), code, value] for (group, code), value in table.items()]
    body = {"cells": encoded, "weighted": weighted_totals(release, counts, dims)}
    session.add(ReleaseTable(release_id=release.id, instrument=instrument, item=item, breakdowns=",".join(dims),
                             released=body))  # fmt: skip
    session.flush()


def stored_tables(
    session: Session,
    release_id: int,
    instrument: str,
    item: str,
    keys: list[str] | None,
    weighted: dict[str, WeightedTable] | None = None,
) -> dict[str, Released]:
    """A release's stored tables of one item by their breakdowns (``keys``; None: all), in the order made.

    With ``weighted``, the weighted totals stored beside them are put there too (none for a release
    without weights), from the same read.
    """
    query = select(ReleaseTable.breakdowns, ReleaseTable.released).where(
        ReleaseTable.release_id == release_id, ReleaseTable.instrument == instrument, ReleaseTable.item == item
    )
    if keys is not None:
        query = query.where(ReleaseTable.breakdowns.in_(keys))
    tables: dict[str, Released] = {}
    for key, body in session.execute(query.order_by(ReleaseTable.created_at, ReleaseTable.breakdowns)):
        tables[key] = {(tuple(group), code): value for group, code, value in body["cells"]}
        if weighted is not None and body.get("weighted"):
            weighted[key] = WeightedTable.from_json(body["weighted"])
    return tables
