"""The open tier: population answers to fixed-instrument items, and their distributions with suppression.

Distributions are computed from ``population_answers``, which a population job fills with each active
agent's answer; nothing here calls a model. Every table released is protected together with the
tables linked to it (its one-way margins and the overall distribution), see ``suppression``.
"""

from __future__ import annotations

import itertools
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from agentbank import audit
from agentbank.answering import AnswerEngine
from agentbank.breakdowns import BREAKDOWNS
from agentbank.errors import InvalidRequestError, NotFoundError
from agentbank.instruments.model import Instrument, Item
from agentbank.models import Agent, Participant, PopulationAnswer
from agentbank.queue import enqueue
from agentbank.suppression import DEFAULT_K, Table, suppress

MAX_BREAKDOWNS = 2


@dataclass(frozen=True)
class Cell:
    """One released (or suppressed) count of agents giving ``code`` within ``group``."""

    group: dict[str, str]
    code: int
    label: str
    count: int | None
    share: float | None


@dataclass(frozen=True)
class Distribution:
    """An item's distribution over active agents, overall or by breakdowns."""

    instrument: str
    item: str
    question: str
    breakdowns: list[str]
    k: int
    total: int | None
    groups: list[dict[str, Any]]
    cells: list[Cell]


def item_codes(item: Item) -> list[tuple[int, str]]:
    """The codes an item's answers take: its options, or whole numbers within its bounds."""
    if item.options:
        return [(o.code, o.label) for o in item.options]
    if item.kind == "numeric" and item.minimum is not None and item.maximum is not None:
        return [(v, str(v)) for v in range(int(item.minimum), int(item.maximum) + 1)]
    raise InvalidRequestError(f"item {item.key} has no fixed answers to count")


def store_population_answer(session: Session, agent_id: Any, instrument: str, item: str, value: Any) -> None:
    """Record (or replace) an agent's coded answer for the open tier."""
    code = round(float(value))
    statement = insert(PopulationAnswer).values(
        agent_id=agent_id, instrument=instrument, item=item, code=code, value=float(value)
    )
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["agent_id", "instrument", "item"], set_={"code": code, "value": float(value)}
        )
    )


def forget_agent(session: Session, agent_id: Any) -> None:
    """Remove an agent from every future aggregate."""
    session.execute(delete(PopulationAnswer).where(PopulationAnswer.agent_id == agent_id))


def distribution(
    session: Session, instrument: Instrument, item_key: str, breakdowns: Sequence[str], k: int = DEFAULT_K
) -> Distribution:
    """The item's distribution over active, consenting agents, with small cells suppressed."""
    try:
        item = instrument.item(item_key)
    except KeyError:
        raise NotFoundError(f"{instrument.key} has no item {item_key!r}") from None
    dims = tuple(dict.fromkeys(breakdowns))
    if len(dims) > MAX_BREAKDOWNS:
        raise InvalidRequestError(f"at most {MAX_BREAKDOWNS} breakdowns at once")
    unknown = [d for d in dims if d not in BREAKDOWNS]
    if unknown:
        raise InvalidRequestError(f"unknown breakdown {unknown[0]!r}; choose among {', '.join(BREAKDOWNS)}")
    codes = item_codes(item)
    rows = session.execute(
        select(PopulationAnswer.code, Participant.demographics)
        .join(Agent, Agent.id == PopulationAnswer.agent_id)
        .join(Participant, Participant.id == Agent.participant_id)
        .where(
            PopulationAnswer.instrument == instrument.key,
            PopulationAnswer.item == item.key,
            Agent.status == "active",
            Participant.consent == "consented",
        )
    ).all()
    counts = Counter(
        (tuple(BREAKDOWNS[d].classify(demo) for d in dims), code) for code, demo in rows if code is not None
    )
    # The counts (not who gave them) decide what is released, so equal counts share one computation.
    released, total = _released(dims, tuple(c for c, _ in codes), k, tuple(sorted(counts.items())))
    return _as_distribution(instrument, item, dims, codes, k, released, total)


@lru_cache(maxsize=512)
def _released(dims: tuple[str, ...], codes: tuple[int, ...], k: int, counts: tuple) -> tuple[dict, int | None]:
    """Released value (or None) of every cell and group total over ``dims``, and of the grand total."""
    tables = _protected_tables(dims, codes, k, dict(counts))
    return tables[dims], tables[()][((), None)]


def _protected_tables(
    dims: tuple[str, ...], codes: tuple[int, ...], k: int, counts: dict
) -> dict[tuple[str, ...], dict[tuple, int | None]]:
    """Suppress the tables over every subset of ``dims``, smallest first, each linked to those below it."""
    categories = [BREAKDOWNS[d].categories for d in dims]
    groups = list(itertools.product(*categories))
    index = {(g, c): i for i, (g, c) in enumerate(itertools.product(groups, codes))}
    base = [counts.get(key, 0) for key in index]
    done: dict[tuple[str, ...], dict[tuple, int | None]] = {}
    for size in range(len(dims) + 1):
        for subset in itertools.combinations(range(len(dims)), size):
            table = Table(base)
            for lower, values in done.items():
                positions = [dims.index(d) for d in lower]
                for key, value in values.items():
                    table.add(
                        ("linked", lower, key), _cells(index, positions, key), linked=True, suppressed=value is None
                    )
            own = []
            for group in itertools.product(*(categories[p] for p in subset)):
                for code in codes:
                    own.append(table.add((group, code), _cells(index, list(subset), (group, code))))
                own.append(table.add((group, None), _cells(index, list(subset), (group, None))))
            suppress(table, k)
            done[tuple(dims[p] for p in subset)] = {s.key: None if s.suppressed else s.value for s in own}
    return done


def _cells(index: dict, positions: list[int], key: tuple) -> list[int]:
    """Base cells whose group matches ``key``'s group on ``positions`` (and its code, unless None)."""
    group, code = key
    return [
        i for (g, c), i in index.items()
        if all(g[p] == v for p, v in zip(positions, group, strict=True)) and (code is None or c == code)
    ]  # fmt: skip


def _as_distribution(
    instrument: Instrument,
    item: Item,
    dims: tuple[str, ...],
    codes: list[tuple[int, str]],
    k: int,
    released: dict,
    total: int | None,
) -> Distribution:
    groups, cells = [], []
    for group in itertools.product(*(BREAKDOWNS[d].categories for d in dims)):
        total = released[(group, None)]
        named = dict(zip(dims, group, strict=True))
        groups.append({"group": named, "n": total})
        for code, label in codes:
            count = released[(group, code)]
            share = round(count / total, 4) if count is not None and total else None
            cells.append(Cell(named, code, label, count, share))
    return Distribution(instrument.key, item.key, item.question, list(dims), k, total, groups, cells)


POPULATION_TASK = "agentbank.population_agent"
POPULATION_QUEUE = "population"


def queue_population(session: Session, instrument: Instrument, items: Sequence[Item], actor: audit.Actor) -> int:
    """Queue one task per active agent to answer ``items`` for the open tier; returns the count."""
    agents = session.scalars(
        select(Agent.id)
        .join(Participant, Participant.id == Agent.participant_id)
        .where(Agent.status == "active", Participant.consent == "consented")
    ).all()
    keys = [item.key for item in items]
    enqueue(
        session,
        POPULATION_QUEUE,
        POPULATION_TASK,
        [{"agent_id": str(a), "instrument": instrument.key, "items": keys} for a in agents],
    )
    audit.record(session, actor, "population.queue", "admin", details={"instrument": instrument.key, "items": keys,
                                                                       "agents": len(agents)})  # fmt: skip
    return len(agents)


def fill_agent(
    session: Session, engine: AnswerEngine, agent_id: uuid.UUID, instrument: Instrument, items: Sequence[Item]
) -> bool:
    """Answer ``items`` as one agent and record the codes for the open tier; False if it left the bank."""
    agent = session.get_one(Agent, agent_id)
    participant = session.get_one(Participant, agent.participant_id)
    if agent.status != "active" or participant.consent != "consented":
        forget_agent(session, agent.id)
        return False
    for item, answer in zip(items, engine.answer(agent, participant, instrument, items), strict=True):
        store_population_answer(session, agent.id, instrument.key, item.key, answer.value)
    audit.record(
        session, audit.SYSTEM, "population.answer", "open", agent_id=agent.id, participant_id=participant.id,
        details={"instrument": instrument.key, "items": [item.key for item in items]},
    )  # fmt: skip
    return True
