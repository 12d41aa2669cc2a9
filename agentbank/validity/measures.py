"""Validity that travels with every answer: the measure the bank holds of how well its agents speak for
their own people, shown wherever an agent's answer is used.

An individual result carries its agent's newest interview card (or says it is not validated). An open-tier
distribution carries the interview agents' measured accuracy on that item, or, where the item was not
scored, on the scored items of its topic (named); it is published only when at least ``k`` people were
scored (the open tier's own threshold), since an accuracy over a handful of people says something about
each of their answers.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy.orm import Session

from agentbank.db.models import BatteryWave, ItemValidity, ReportCard
from agentbank.db.queue import enqueue_once
from agentbank.instruments.model import Instrument
from agentbank.statuses import BatteryWaveStatus
from agentbank.validity.cards import item_validity, latest_cards

ValidityStatus = Literal["measured", "nearest", "not_validated"]
# The worker task that scores the bank's agents again (cards and item validity) when a participant's
# retest arrives or their agent is rebuilt; its body lives with the evaluation, which the worker is given.
REFRESH_TASK = "agentbank.validity_refresh"
REFRESH_QUEUE = "validity"


@dataclass(frozen=True)
class ItemMeasure:
    """What the bank has measured about an item, as the open tier shows it."""

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

    @property
    def below_baseline(self) -> bool | None:
        """Whether the agents answered this item less accurately than the best non-LLM baseline."""
        if self.accuracy is None or self.baseline_accuracy is None:
            return None
        return self.accuracy < self.baseline_accuracy


def item_measure(session: Session, instrument: Instrument, item: str, k: int) -> ItemMeasure:
    """The measure shown with ``item``'s distribution (scored on at least ``k`` people)."""
    own = item_validity(session, instrument.key, [item]).get(item)
    if own is not None and own.agents >= k:
        return _measure("measured", [own])
    topic = instrument.item(item).meta.get("topic")
    if topic is None:
        return ItemMeasure("not_validated")
    same_topic = [i.key for i in instrument.items if i.meta.get("topic") == topic and i.key != item]
    rows = [row for row in item_validity(session, instrument.key, same_topic).values() if row.agents >= k]
    newest = max((row.run_id for row in rows), key=lambda run: _run_time(rows, run), default=None)
    rows = [row for row in rows if row.run_id == newest]  # figures of one run only
    return _measure("nearest", rows) if rows else ItemMeasure("not_validated")


def request_refresh(session: Session, reason: str) -> None:
    """Ask for the bank's cards to be refreshed, in the caller's transaction (one request waits at most)."""
    enqueue_once(session, REFRESH_QUEUE, REFRESH_TASK, {"reason": reason})


def has_retest(session: Session, participant_id: uuid.UUID) -> bool:
    """Whether the participant completed their retest (so their agent can be scored)."""
    wave = session.get(BatteryWave, (participant_id, 2))
    return wave is not None and wave.status == BatteryWaveStatus.COMPLETE


def agent_cards(session: Session, agent_ids: list[uuid.UUID]) -> dict[uuid.UUID, ReportCard]:
    """Each agent's newest interview card (the GSS's where it has several), for its results."""
    out: dict[uuid.UUID, ReportCard] = {}
    for agent_id, cards in latest_cards(session, agent_ids).items():
        interview = sorted((c for c in cards if c.condition == "interview"), key=lambda c: (c.instrument != "gss",))
        if interview:
            out[agent_id] = interview[0]
    return out


def _measure(status: ValidityStatus, rows: list[ItemValidity]) -> ItemMeasure:
    """One figure from the rows of one run: each item weighted by the people scored on it."""

    def mean(values: list[tuple[float | None, int]]) -> float | None:
        kept = [(v, n) for v, n in values if v is not None]
        return sum(v * n for v, n in kept) / sum(n for _, n in kept) if kept else None

    accuracy = mean([(row.accuracy, row.agents) for row in rows])
    retest = mean([(row.retest, row.agents) for row in rows])
    return ItemMeasure(
        status=status, items=tuple(sorted(row.item for row in rows)), agents=max(row.agents for row in rows),
        accuracy=accuracy, retest=retest,
        normalized_accuracy=rows[0].normalized_accuracy if len(rows) == 1 else _ratio(accuracy, retest),
        baseline=rows[0].baseline, baseline_accuracy=mean([(row.baseline_accuracy, row.agents) for row in rows]),
        run_id=rows[0].run_id, model=rows[0].model, measured_at=max(row.created_at for row in rows),
    )  # fmt: skip


def _ratio(accuracy: float | None, retest: float | None) -> float | None:
    return accuracy / retest if accuracy is not None and retest else None


def _run_time(rows: list[ItemValidity], run_id: str) -> datetime:
    return max(row.created_at for row in rows if row.run_id == run_id)
