"""Report cards: each agent's accuracy against its own participant, shown beside the agent.

An evaluation run that scores interview agents writes one card per agent, instrument and run; a
team choosing agents for an approved project sees each agent's latest card per instrument. A card is
about one person, so its scores (and, item by item, whether the agent matched the person's answer and
whether the person repeated it) are sealed with the participant's data key: read with the keyring,
gone with the key.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from agentbank.db.models import Agent, Participant, ReportCard
from agentbank.keys.crypto import DataKeyDestroyedError, KeyRing

# Per item: (the agent answered as the person did, the person repeated their answer, the run's best
# baseline answered as the person did, or None where it did not run).
ItemFlags = dict[str, tuple[int, int, int | None]]
SCORES = ("items", "accuracy", "self_consistency", "normalized_accuracy", "normalized_low", "normalized_high",
          "baseline", "baseline_normalized")  # fmt: skip


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
    item_flags: ItemFlags = field(default_factory=dict)

    def sealed_fields(self) -> dict[str, Any]:
        """Everything about the person, as sealed in the card."""
        return {k: v for k, v in asdict(self).items() if k not in ("agent_id", "condition")}


@dataclass(frozen=True)
class Card:
    """A stored card, opened."""

    agent_id: uuid.UUID
    instrument: str
    run_id: str
    condition: str
    model: str
    prompt_version: str
    created_at: datetime
    items: int
    accuracy: float
    self_consistency: float
    normalized_accuracy: float | None
    normalized_low: float | None
    normalized_high: float | None
    baseline: str | None
    baseline_normalized: float | None


def store_cards(
    session: Session, keys: KeyRing, scores: Iterable[CardScore], *, instrument: str, run_id: str, model: str,
    prompt_version: str,
) -> int:  # fmt: skip
    """Write (or, for a run scored again, replace) the cards of a run, sealed; returns how many."""
    scores = list(scores)
    keyed = session.execute(
        select(Agent.id, Participant.id, Participant.wrapped_key)
        .join(Participant, Participant.id == Agent.participant_id)
        .where(Agent.id.in_([s.agent_id for s in scores]))
    )
    owners = {agent_id: (participant_id, wrapped) for agent_id, participant_id, wrapped in keyed}
    count = 0
    for score in scores:
        try:
            cipher = keys.cipher(*owners[score.agent_id])
        except (KeyError, DataKeyDestroyedError):
            continue  # the person withdrew while the run was scored: no card
        sealed = cipher.seal_json(score.sealed_fields())
        values: dict[str, Any] = {
            "agent_id": score.agent_id, "instrument": instrument, "run_id": run_id, "condition": score.condition,
            "model": model, "prompt_version": prompt_version, "scores_encrypted": sealed,
        }  # fmt: skip
        statement = insert(ReportCard).values(**values)
        session.execute(statement.on_conflict_do_update(
            index_elements=["agent_id", "instrument", "run_id", "condition"],
            set_={"scores_encrypted": statement.excluded.scores_encrypted, "model": statement.excluded.model},
        ))  # fmt: skip
        count += 1
    return count


def latest_cards(session: Session, keys: KeyRing, agent_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[Card]]:
    """Each agent's newest card per instrument and condition, opened (none for a withdrawn person)."""
    rows = session.execute(
        select(ReportCard, Participant.id, Participant.wrapped_key)
        .join(Agent, Agent.id == ReportCard.agent_id)
        .join(Participant, Participant.id == Agent.participant_id)
        .where(ReportCard.agent_id.in_(agent_ids))
        .order_by(ReportCard.created_at.desc(), ReportCard.id.desc())
    )
    out: dict[uuid.UUID, list[Card]] = {}
    seen: set[tuple[uuid.UUID, str, str]] = set()
    for card, participant_id, wrapped in rows:
        key = (card.agent_id, card.instrument, card.condition)
        if key in seen:
            continue
        seen.add(key)
        try:
            scores = keys.cipher(participant_id, wrapped).open_json(card.scores_encrypted)
        except DataKeyDestroyedError:
            continue
        opened = {name: scores.get(name) for name in SCORES}
        out.setdefault(card.agent_id, []).append(Card(
            card.agent_id, card.instrument, card.run_id, card.condition, card.model, card.prompt_version,
            card.created_at, **opened,
        ))  # fmt: skip
    return out
