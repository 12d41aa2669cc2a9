"""What a run tells the bank about its own agents: a report card per agent, sealed with its participant's key.

A card is one agent's normalized accuracy against its own participant, with a 95% interval over the
items it was scored on (a person answers a few dozen items, so one figure alone overstates what is
known), beside the run's best non-LLM baseline scored on the same person and items. An interview card
also holds, item by item, whether the agent matched the person's answer, whether the person repeated it
and whether the baseline matched it: the next release counts those over its members, with its noise,
as the item's validity in the open tier (``agentbank.publication.validity``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.building.validity.cards import CardScore, ItemFlags, store_cards
from agentbank.core.statuses import AgentStatus
from agentbank.db.models import Agent, Participant
from agentbank.keys.crypto import KeyRing
from evaluation.runs.records import BASELINES, ResultRow, RunRecord
from evaluation.runs.solvers import SOLVERS
from evaluation.scoring import metrics
from evaluation.scoring.scores import PersonScore

RESAMPLES = 1000


def best_baseline(summary: dict[str, Any]) -> str | None:
    """The non-LLM baseline with the highest mean normalized accuracy in the run, if any ran."""
    ran = {name: c["normalized_accuracy"] for name, c in summary["conditions"].items()
           if name in BASELINES and c["normalized_accuracy"] is not None}  # fmt: skip
    return max(sorted(ran), key=lambda name: ran[name]) if ran else None


def person_interval(rows: list[ResultRow], seed: int = 0) -> tuple[float, float] | None:
    """A 95% bootstrap interval of one person's normalized accuracy, resampling their items."""
    scored = [r for r in rows if None not in (r.predicted, r.actual, r.retest)]
    if len(scored) < 2:
        return None
    hit = np.array([r.predicted == r.actual for r in scored], dtype=float)
    kept = np.array([r.retest == r.actual for r in scored], dtype=float)
    draws = np.random.default_rng(seed).integers(0, len(scored), size=(RESAMPLES, len(scored)))
    own = kept[draws].mean(axis=1)
    ratios = hit[draws].mean(axis=1)[own > 0] / own[own > 0]
    if not len(ratios):
        return None
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def card_scores(
    rows: list[ResultRow], scores: list[PersonScore], summary: dict[str, Any], agents: Mapping[str, uuid.UUID],
    seed: int = 0,
) -> list[CardScore]:  # fmt: skip
    """A card for every condition the bank's agents (``agents``: person → agent id) answered in the run."""
    baseline = best_baseline(summary)
    by_person: dict[tuple[str, str], list[ResultRow]] = {}
    for row in rows:
        by_person.setdefault((row.person, row.condition), []).append(row)
    out = []
    for score in scores:
        if not SOLVERS[score.condition].bank_agent or score.person not in agents:
            continue
        mine = by_person[(score.person, score.condition)]
        interval = person_interval(mine, seed)
        items = {r.item for r in _complete(mine)}
        theirs = [r for r in by_person.get((score.person, baseline or ""), []) if r.item in items]
        out.append(CardScore(
            agent_id=agents[score.person], condition=score.condition, items=score.items, accuracy=score.accuracy,
            self_consistency=score.self_consistency, normalized_accuracy=score.normalized,
            normalized_low=interval[0] if interval else None, normalized_high=interval[1] if interval else None,
            baseline=baseline if theirs else None, baseline_normalized=_normalized(theirs),
            item_flags=item_flags(mine, theirs) if score.condition == VALIDITY_CONDITION else {},
        ))  # fmt: skip
    return out


VALIDITY_CONDITION = "interview"


def item_flags(mine: list[ResultRow], baseline: list[ResultRow]) -> ItemFlags:
    """Per item one person was scored on: their agent right, they repeated themselves, the baseline right."""
    theirs = {r.item: r.predicted == r.actual for r in _complete(baseline)}
    return {r.item: (int(r.predicted == r.actual), int(r.retest == r.actual),
                     None if r.item not in theirs else int(theirs[r.item])) for r in _complete(mine)}  # fmt: skip


def store_bank_validity(
    session: Session, keys: KeyRing, record: RunRecord, rows: list[ResultRow], scores: list[PersonScore],
    summary: dict[str, Any], instrument: str,
) -> tuple[int, int]:  # fmt: skip
    """Write a sealed card for every bank agent the run scored; (cards written, items scored)."""
    people = sorted({s.person for s in scores if SOLVERS[s.condition].bank_agent})
    found = session.execute(
        select(Participant.pseudonym, Agent.id)
        .join(Agent, Agent.participant_id == Participant.id)
        .where(Participant.pseudonym.in_(people), Agent.status == AgentStatus.ACTIVE)
    )
    agents = {pseudonym: agent_id for pseudonym, agent_id in found}
    cards = card_scores(rows, scores, summary, agents, seed=int(record.config.get("seed", 0)))
    written = store_cards(session, keys, cards, instrument=instrument, run_id=record.run_id, model=record.model,
                          prompt_version=record.prompt_version)  # fmt: skip
    items = {item for card in cards for item in card.item_flags}
    return written, len(items)


def _complete(rows: Iterable[ResultRow]) -> list[ResultRow]:
    return [r for r in rows if None not in (r.predicted, r.actual, r.retest)]


def _normalized(rows: list[ResultRow]) -> float | None:
    scored = _complete(rows)
    if not scored:
        return None
    own = metrics.accuracy([r.retest for r in scored], [r.actual for r in scored])
    return metrics.accuracy([r.predicted for r in scored], [r.actual for r in scored]) / own if own > 0 else None
