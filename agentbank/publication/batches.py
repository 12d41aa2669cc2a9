"""Population answers through a provider's Batch API: half the price of calls one by one, answers within
the provider's completion window (a day), for population runs that can wait.

1. **Submit** (``submit_population_batch``): every active agent's calls are planned through the door,
   as for any consultation, and sent as one batch; the bank keeps what was asked of whom (never the
   requests: they hold interview text, and are rebuilt from the agents when needed).
2. **Collect** (``collect_batch``, run again until it ends): once the provider has answered, each agent
   is consulted through the door with a chat model that answers from the batch (``BatchAnswers``): the
   answers are stored with their provenance like live ones (same cache keys: a later live run asks
   nothing again), checked, audited and counted for the open tier. An agent whose request the provider
   did not answer is left out and counted; a collection that stops halfway is resumed by running it
   again, with nothing asked or paid twice.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.consultation.answering import AgentUnavailableError
from agentbank.consultation.door import POPULATION, AgentDoor
from agentbank.core.errors import ProviderError
from agentbank.core.statuses import BatchStatus, move
from agentbank.db import transaction
from agentbank.db.models import ModelBatch
from agentbank.instruments import load_instrument, select_items
from agentbank.instruments.model import Instrument, Item
from agentbank.providers.batch_api import BatchAnswers, BatchClient, batch_line
from agentbank.providers.chat import ChatModel
from agentbank.providers.chat_requests import request_body
from agentbank.publication.population import active_agent_ids, fill_agent


def submit_population_batch(
    sessions: sessionmaker[Session],
    door: AgentDoor,
    client: BatchClient,
    model: str,
    instrument: Instrument,
    items: Sequence[Item],
    actor: audit.Actor,
) -> ModelBatch:
    """Send every active agent's missing answers to ``items`` as one batch; the batch's record."""
    with sessions() as session:
        agents = active_agent_ids(session)
    lines: dict[str, dict[str, object]] = {}
    asked: list[str] = []
    for agent_id in agents:
        try:
            calls = door.planned_calls(sessions, POPULATION, agent_id, instrument, items)
        except AgentUnavailableError:  # withdrew since the list was read
            continue
        asked.append(str(agent_id))
        for call in calls:
            line = batch_line(request_body(model, call.request))
            lines[str(line["custom_id"])] = line  # two agents never share a request: their prompts differ
    provider = client.submit(list(lines.values())) if lines else None
    with transaction(sessions) as session:
        batch = ModelBatch(
            provider_batch_id=provider[1] if provider else None, provider_status="validating" if provider else None,
            model=model, instrument=instrument.key, items=[i.key for i in items], agent_ids=asked,
            requests=len(lines), details={"input_file_id": provider[0]} if provider else {},
        )  # fmt: skip
        session.add(batch)
        session.flush()
        audit.record(
            session, actor, "population.batch", Tier.ADMIN,
            details={"batch": str(batch.id), "instrument": instrument.key, "items": batch.items,
                     "agents": len(asked), "requests": len(lines)},
        )  # fmt: skip
    return batch


def collect_batch(
    sessions: sessionmaker[Session],
    client: BatchClient,
    door_for: Callable[[ChatModel], AgentDoor],
    batch_id: uuid.UUID,
    reference_dir: Path,
) -> ModelBatch:
    """Store and release a finished batch's answers; a batch still at work is only looked at."""
    with sessions() as session:
        batch = session.get_one(ModelBatch, batch_id)
    if batch.status != BatchStatus.SUBMITTED:
        return batch
    answered: dict[str, dict[str, object]] = {}
    if batch.provider_batch_id is not None:
        state = client.state(batch.provider_batch_id)
        if not state.ended or state.status != "completed" or state.output_file_id is None:
            return _record_state(sessions, batch_id, state.status, ended=state.ended)
        answered = client.results(state.output_file_id)
    instrument = load_instrument(batch.instrument, reference_dir)
    items = select_items(instrument, batch.items)
    grant = replace(POPULATION, details={"batch": str(batch.id)})
    door = door_for(BatchAnswers(batch.model, answered))
    released = failed = 0
    try:
        for agent_id in batch.agent_ids:
            try:
                released += fill_agent(sessions, door, uuid.UUID(agent_id), instrument, items, grant)
            except ProviderError:  # the provider did not answer one of its requests: the next batch asks
                failed += 1
    finally:
        door.close()
    with transaction(sessions) as session:
        row = session.get_one(ModelBatch, batch_id, with_for_update=True)
        row.status = move(row.status, BatchStatus.COLLECTED, "the batch")
        row.provider_status, row.answered, row.failed = "completed", released, failed
        row.finished_at = datetime.now(UTC)
        audit.record(session, audit.SYSTEM, "population.batch_collected", Tier.ADMIN,
                     details={"batch": str(batch_id), "answered": released, "failed": failed})  # fmt: skip
    return row


def _record_state(sessions: sessionmaker[Session], batch_id: uuid.UUID, status: str, *, ended: bool) -> ModelBatch:
    """Keep the provider's status; a batch it ended without answers (failed, expired, cancelled) fails."""
    with transaction(sessions) as session:
        row = session.get_one(ModelBatch, batch_id, with_for_update=True)
        row.provider_status = status
        if ended:
            row.status = move(row.status, BatchStatus.FAILED, "the batch")
            row.finished_at = datetime.now(UTC)
            audit.record(session, audit.SYSTEM, "population.batch_failed", Tier.ADMIN,
                         details={"batch": str(batch_id), "provider_status": status})  # fmt: skip
    return row
