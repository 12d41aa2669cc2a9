"""What a release measures: a standing workload for everyone, and the tables researchers asked for.

Measuring every table of every item whether anyone reads it or not spread each answer's budget over 79
tables, so each carried a large noise. A release measures instead, per item, the overall table and one
table per *standing* breakdown (those researchers use most, a setting), with their weighted totals, and
keeps part of the budget for the tables researchers ask for: a pair of breakdowns, or a breakdown that is
not standing. A read of a table the release lacks is queued here (``ask``); the next cut measures it from
that cut's members and publishes it to everyone. An item keeps its ``ASKED_PER_ITEM`` most recently asked
tables in the releases after (a table asked again stays), so a table once asked does not vanish with the
release it first appeared in, and the reserve's noise per table is fixed whatever is asked.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from agentbank.db.models import TableRequest
from agentbank.publication.breakdowns import BREAKDOWNS
from agentbank.publication.privacy import ASKED_PER_ITEM

# The breakdowns researchers use most in the GSS literature, measured in every release.
STANDING = ("sex", "age_band", "race", "education", "region", "party")

Dims = tuple[str, ...]


@dataclass(frozen=True)
class Workload:
    """The tables a release measures: the standing ones of every item, and each item's asked tables."""

    standing: Dims
    asked: dict[tuple[str, str], tuple[Dims, ...]] = field(default_factory=dict)
    waiting: int = 0  # asked tables it holds that no release has measured yet (they make a cut due)

    def tables(self, instrument: str, item: str) -> list[Dims]:
        """Every table the release measures of one item: overall, standing one-way, then asked (in order)."""
        return [(), *((d,) for d in self.standing), *self.asked.get((instrument, item), ())]

    def asked_count(self) -> int:
        return sum(len(tables) for tables in self.asked.values())


def standing_of(names: list[str] | tuple[str, ...], dimensions: tuple[str, ...]) -> Dims:
    """The standing breakdowns named (in the release's order), each one a breakdown the release cuts by."""
    unknown = [n for n in names if n not in dimensions]
    if unknown:
        raise ValueError(f"unknown standing breakdown {unknown[0]!r}; choose among {', '.join(dimensions)}")
    return tuple(d for d in dimensions if d in names)


def is_standing(dims: Dims, standing: Dims) -> bool:
    """Whether every release measures this table (overall, or one-way by a standing breakdown)."""
    return not dims or (len(dims) == 1 and dims[0] in standing)


def load_workload(session: Session, standing: Dims, dimensions: tuple[str, ...]) -> Workload:
    """The workload of the next cut: the standing tables, and per item the most recently asked tables."""
    rows = session.execute(
        select(TableRequest.instrument, TableRequest.item, TableRequest.breakdowns, TableRequest.first_release)
        .order_by(TableRequest.last_asked_at.desc(), TableRequest.breakdowns)
    ).all()  # fmt: skip
    asked: dict[tuple[str, str], list[Dims]] = defaultdict(list)
    waiting = 0
    for instrument, item, key, first_release in rows:
        dims = tuple(key.split(","))
        if any(d not in dimensions for d in dims) or is_standing(dims, standing):
            continue  # a breakdown since removed, or a table that became standing
        if len(asked[(instrument, item)]) < ASKED_PER_ITEM:
            asked[(instrument, item)].append(dims)
            waiting += first_release is None
    tables = {key: tuple(sorted(found, key=_order)) for key, found in asked.items()}
    return Workload(standing, tables, waiting)


def _order(dims: Dims) -> tuple[int, ...]:
    names = list(BREAKDOWNS)
    return (len(dims), *(names.index(d) for d in dims))


def ask(session: Session, instrument: str, item: str, dims: Dims) -> TableRequest:
    """Queue a table for the next cut (asked again: it moves to the front of its item's tables)."""
    now = datetime.now(UTC)
    statement = insert(TableRequest).values(
        instrument=instrument, item=item, breakdowns=",".join(dims), first_asked_at=now, last_asked_at=now, asks=1
    )
    session.execute(statement.on_conflict_do_update(
        index_elements=["instrument", "item", "breakdowns"],
        set_={"last_asked_at": now, "asks": TableRequest.asks + 1},
    ))  # fmt: skip
    return session.get_one(TableRequest, (instrument, item, ",".join(dims)), populate_existing=True)


def mark_measured(session: Session, workload: Workload, release_id: int) -> None:
    """Note the first release that measured each asked table."""
    for (instrument, item), tables in workload.asked.items():
        for dims in tables:
            row = session.get(TableRequest, (instrument, item, ",".join(dims)))
            if row is not None and row.first_release is None:
                row.first_release = release_id
