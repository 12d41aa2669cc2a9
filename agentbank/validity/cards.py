"""Report cards: each agent's accuracy against its own participant, shown beside the agent.

An evaluation run that scores interview agents writes one card per agent, instrument and run; a
team choosing agents for an approved project sees each agent's latest card per instrument.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import distinct_on, insert
from sqlalchemy.orm import Session

from agentbank.db.models import Agent, ItemValidity, Participant, Project, ReportCard
from agentbank.errors import PermissionDeniedError
from agentbank.statuses import AgentStatus, ConsentStatus, ProjectStatus

SCORES = ("items", "accuracy", "self_consistency", "normalized_accuracy", "normalized_low", "normalized_high",
          "baseline", "baseline_normalized")  # fmt: skip
VALIDITY = ("model", "agents", "accuracy", "retest", "normalized_accuracy", "baseline", "baseline_accuracy")


@dataclass(frozen=True)
class CardScore:
    """What a run found for one agent under one condition."""

    agent_id: uuid.UUID
    condition: str
    items: int
    accuracy: float
    self_consistency: float
    normalized_accuracy: float | None
    normalized_low: float | None = None
    normalized_high: float | None = None
    baseline: str | None = None  # the run's best non-LLM baseline, on the same person and items
    baseline_normalized: float | None = None


@dataclass(frozen=True)
class ItemScore:
    """What a run found for one item: the interview agents against their people, beside the best baseline."""

    item: str
    agents: int
    accuracy: float
    retest: float
    normalized_accuracy: float | None
    baseline: str | None
    baseline_accuracy: float | None


def store_cards(
    session: Session, scores: Iterable[CardScore], *, instrument: str, run_id: str, model: str, prompt_version: str
) -> int:
    """Write (or, for a run scored again, replace) the cards of a run; returns how many."""
    count = 0
    for score in scores:
        values: dict[str, Any] = {
            "agent_id": score.agent_id,
            "instrument": instrument,
            "run_id": run_id,
            "condition": score.condition,
            "model": model,
            "prompt_version": prompt_version,
            "items": score.items,
            "accuracy": score.accuracy,
            "self_consistency": score.self_consistency,
            "normalized_accuracy": score.normalized_accuracy,
            "normalized_low": score.normalized_low,
            "normalized_high": score.normalized_high,
            "baseline": score.baseline,
            "baseline_normalized": score.baseline_normalized,
        }
        statement = insert(ReportCard).values(**values)
        session.execute(
            statement.on_conflict_do_update(
                index_elements=["agent_id", "instrument", "run_id", "condition"],
                set_={k: statement.excluded[k] for k in SCORES},
            )
        )
        count += 1
    return count


def store_item_validity(
    session: Session, scores: Iterable[ItemScore], *, instrument: str, run_id: str, model: str
) -> int:
    """Write (or replace) the items' validity found by a run; returns how many."""
    count = 0
    for score in scores:
        values = {"instrument": instrument, "run_id": run_id, "model": model, **asdict(score)}
        statement = insert(ItemValidity).values(**values)
        update = {k: statement.excluded[k] for k in VALIDITY}
        session.execute(statement.on_conflict_do_update(index_elements=["instrument", "item", "run_id"], set_=update))
        count += 1
    return count


def item_validity(session: Session, instrument: str, items: list[str]) -> dict[str, ItemValidity]:
    """The newest measured validity of each of ``items`` that has one."""
    rows = session.scalars(
        select(ItemValidity)
        .where(ItemValidity.instrument == instrument, ItemValidity.item.in_(items))
        .order_by(ItemValidity.item, ItemValidity.created_at.desc(), ItemValidity.id.desc())
        .ext(distinct_on(ItemValidity.item))
    )
    return {row.item: row for row in rows}


def latest_cards(session: Session, agent_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[ReportCard]]:
    """Each agent's newest card per instrument and condition."""
    cards = session.scalars(
        select(ReportCard).where(ReportCard.agent_id.in_(agent_ids)).order_by(ReportCard.created_at.desc())
    )
    out: dict[uuid.UUID, list[ReportCard]] = {}
    seen: set[tuple[uuid.UUID, str, str]] = set()
    for card in cards:
        key = (card.agent_id, card.instrument, card.condition)
        if key not in seen:
            seen.add(key)
            out.setdefault(card.agent_id, []).append(card)
    return out


def project_agents(session: Session, project: Project) -> list[Agent]:
    """The active agents an approved project may query, in a stable order."""
    if project.status != ProjectStatus.APPROVED:
        raise PermissionDeniedError(f"the project is {project.status}, not approved")
    query = (
        select(Agent)
        .join(Participant, Participant.id == Agent.participant_id)
        .where(Agent.status == AgentStatus.ACTIVE, Participant.consent == ConsentStatus.CONSENTED)
        .order_by(Agent.id)
    )
    allowed = project.scope.get("agents")
    if allowed is not None:
        query = query.where(Agent.id.in_([uuid.UUID(a) for a in allowed]))
    return list(session.scalars(query))
