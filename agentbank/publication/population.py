"""The open tier's raw material: each active agent's coded answers to fixed-instrument items.

A population job fills ``population_answers`` with each active agent's answers, sealed with its
participant's data key (one sealed object per agent and instrument). Nothing is released from it
directly: a release cut opens them in memory and publishes only protected tables (``releases``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.consultation.answering import AgentUnavailableError
from agentbank.consultation.answering.costs import Estimate, Estimator
from agentbank.consultation.door import POPULATION, AgentDoor, Consultation, Grant
from agentbank.core.settings import Settings
from agentbank.core.statuses import AgentStatus, ConsentStatus
from agentbank.db import transaction
from agentbank.db.models import Agent, Participant, PopulationAnswer
from agentbank.db.queue import enqueue
from agentbank.instruments.model import Instrument, Item
from agentbank.keys.crypto import Cipher
from agentbank.providers.tokens import counter_of


def store_population_answers(
    session: Session, cipher: Cipher, agent_id: uuid.UUID, instrument: str, values: Mapping[str, Any]
) -> None:
    """Record (or replace) an agent's coded answers to some items of ``instrument``, sealed with ``cipher``
    (its participant's), beside those it gave before."""
    answers = {item: [round(float(v)), float(v)] for item, v in values.items()}
    session.execute(
        insert(PopulationAnswer)
        .values(agent_id=agent_id, instrument=instrument, answers_encrypted=cipher.seal_json({}))
        .on_conflict_do_nothing(index_elements=["agent_id", "instrument"])
    )
    # Two tasks may answer items of the same agent at once: each merges under the row's lock.
    row = session.scalars(
        select(PopulationAnswer)
        .where(PopulationAnswer.agent_id == agent_id, PopulationAnswer.instrument == instrument)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).one()
    row.answers_encrypted = cipher.seal_json({**cipher.open_json(row.answers_encrypted), **answers})
    row.updated_at = func.now()


def forget_agent(session: Session, agent_id: Any) -> None:
    """Remove an agent from every future aggregate."""
    session.execute(delete(PopulationAnswer).where(PopulationAnswer.agent_id == agent_id))


POPULATION_TASK = "agentbank.population_agent"
POPULATION_QUEUE = "population"


def active_agent_ids(session: Session) -> list[uuid.UUID]:
    """Every agent that may answer for the open tier: active, its participant consenting."""
    return list(
        session.scalars(
            select(Agent.id)
            .join(Participant, Participant.id == Agent.participant_id)
            .where(Agent.status == AgentStatus.ACTIVE, Participant.consent == ConsentStatus.CONSENTED)
        )
    )


def queue_population(session: Session, instrument: Instrument, items: Sequence[Item], actor: audit.Actor) -> int:
    """Queue one task per active agent to answer ``items`` for the open tier; returns the count."""
    agents = active_agent_ids(session)
    keys = [item.key for item in items]
    enqueue(
        session,
        POPULATION_QUEUE,
        POPULATION_TASK,
        [{"agent_id": str(a), "instrument": instrument.key, "items": keys} for a in agents],
    )
    audit.record(session, actor, "population.queue", Tier.ADMIN, details={"instrument": instrument.key, "items": keys,
                                                                       "agents": len(agents)})  # fmt: skip
    return len(agents)


def fill_agent(
    sessions: sessionmaker[Session], door: AgentDoor, agent_id: uuid.UUID, instrument: Instrument,
    items: Sequence[Item], grant: Grant = POPULATION, *, options: Mapping[str, Any] | None = None,
) -> bool:  # fmt: skip
    """Answer ``items`` as one agent and record the codes for the open tier; False if it left the bank.
    ``options`` are the answering engine's (a demo bank samples at a temperature of its own)."""

    def record(session: Session, consultation: Consultation) -> None:
        # The rows the door's release read and locked in this transaction: from the session, no statement.
        agent = session.get_one(Agent, agent_id)
        participant = session.get_one(Participant, agent.participant_id)
        cipher = door.keys.cipher(participant.id, participant.wrapped_key)
        values = {item.key: answer.value for item, answer in zip(items, consultation.answers, strict=True)}
        store_population_answers(session, cipher, agent_id, instrument.key, values)

    try:
        door.survey(sessions, grant, agent_id, instrument, items, then=record, **(options or {}))
    except AgentUnavailableError:
        with transaction(sessions) as session:
            forget_agent(session, agent_id)
        return False
    return True


def estimate_population(
    sessions: sessionmaker[Session], door: AgentDoor, settings: Settings, instrument: Instrument, items: Sequence[Item]
) -> Estimate:
    """What ``queue_population`` would cost: every active agent's calls for ``items`` (answers already
    stored cost none), planned in the order the tasks are queued; nothing asked, queued or audited."""
    with transaction(sessions) as session:
        agents = active_agent_ids(session)
        estimator = Estimator(session, settings, door.chat.name, counter_of(door.chat))
    for agent_id in agents:
        try:
            calls = door.planned_calls(sessions, POPULATION, agent_id, instrument, items)
        except AgentUnavailableError:  # withdrew since the list was read
            continue
        estimator.add(calls, len(items))
    return estimator.finish()
