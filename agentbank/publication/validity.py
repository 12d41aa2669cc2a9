"""An item's validity as the open tier shows it: figures of the current release, under the same protection.

The bank scores its agents against their own people (``agentbank evaluate --dataset bank``, and again
after each retest); those scores are sealed per person. A release counts, over its members, the people
scored on each item, their agents right, the people who repeated their own answer and the best baseline
right, each count with the release's noise (``protection``). Between releases nothing moves, so reading
the figures before and after one person's retest shows nothing; an item is shown measured when its
noisy count of people reaches the release's ``k``, else the scored items of its topic stand in (named).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy.orm import Session

from agentbank.db.models import Release, ReleaseValidity
from agentbank.instruments.model import Instrument
from agentbank.publication.releases import current_release
from agentbank.publication.tables import stored_validity

ValidityStatus = Literal["measured", "nearest", "not_validated"]


@dataclass(frozen=True)
class ItemMeasure:
    """What the current release says about an item's validity."""

    status: ValidityStatus
    items: tuple[str, ...] = ()  # the items the figures come from (the item itself, or its topic's)
    agents: int = 0
    accuracy: float | None = None
    retest: float | None = None
    normalized_accuracy: float | None = None
    baseline: str | None = None
    baseline_accuracy: float | None = None
    run_id: str | None = None
    model: str | None = None
    measured_at: datetime | None = None
    release: int | None = None

    @property
    def below_baseline(self) -> bool | None:
        """Whether the agents answered this item less accurately than the best non-LLM baseline."""
        if self.accuracy is None or self.baseline_accuracy is None:
            return None
        return self.accuracy < self.baseline_accuracy


def item_measure(session: Session, instrument: Instrument, item: str, release_id: int | None = None) -> ItemMeasure:
    """The measure shown with ``item``'s distribution, from the current release (or the one named).

    The threshold is the ``k`` the release was cut with, as for its cells: the bank's setting may have
    changed since, and a demo release's smaller k was chosen with its noise."""
    release = current_release(session) if release_id is None else session.get(Release, release_id)
    if release is None:
        return ItemMeasure("not_validated")
    k = release.k
    own = stored_validity(session, release.id, instrument.key, [item]).get(item)
    if own is not None and own.scored >= k:
        return _measure("measured", [own], release.id)
    topic = instrument.item(item).meta.get("topic")
    if topic is None:
        return ItemMeasure("not_validated", release=release.id)
    same_topic = [i.key for i in instrument.items if i.meta.get("topic") == topic and i.key != item]
    rows = [row for row in stored_validity(session, release.id, instrument.key, same_topic).values() if row.scored >= k]
    return _measure("nearest", rows, release.id) if rows else ItemMeasure("not_validated", release=release.id)


def _measure(status: ValidityStatus, rows: list[ReleaseValidity], release: int) -> ItemMeasure:
    """One figure from the rows: counts summed over the items (the noise of each stays in its sum)."""
    scored = sum(max(r.scored, 0) for r in rows)
    right = sum(max(r.right, 0) for r in rows)
    repeated = sum(max(r.repeated, 0) for r in rows)
    with_baseline = [r for r in rows if r.baseline_right is not None]
    accuracy = _clip(right / scored) if scored else None
    retest = _clip(repeated / scored) if scored else None
    baseline_accuracy = _clip(sum(max(r.baseline_right or 0, 0) for r in with_baseline) / scored) if (
        with_baseline and scored) else None  # fmt: skip
    return ItemMeasure(
        status=status, items=tuple(sorted(r.item for r in rows)), agents=max(r.scored for r in rows),
        accuracy=_round(accuracy), retest=_round(retest),
        normalized_accuracy=_round(accuracy / retest) if accuracy is not None and retest else None,
        baseline=rows[0].baseline, baseline_accuracy=_round(baseline_accuracy), run_id=rows[0].run_id,
        model=rows[0].model, measured_at=rows[0].measured_at, release=release,
    )  # fmt: skip


def _clip(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
