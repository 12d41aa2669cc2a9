"""Shared helpers of the tests (moved from ``tests.agentbank.test_answers_as_made``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session, sessionmaker

from agentbank.consultation.door import AgentDoor
from agentbank.db import make_sessionmaker, transaction
from agentbank.providers.fakes import ScriptedChatModel
from tests.support.factories import build, responder


@pytest.fixture
def sessions(fresh_database: str) -> Iterator[sessionmaker[Session]]:
    engine = create_engine(fresh_database)
    yield make_sessionmaker(engine)
    engine.dispose()


def bank_of(sessions: sessionmaker[Session], chat: Any, agents: int = 1, calls_in_flight: int = 1):
    """``agents`` built agents (committed) and a door to them with ``chat``."""
    built = []
    with transaction(sessions) as session:
        embedder = keys = None
        for n in range(agents):
            participant, agent, _, embedder, keys = build(
                session, ref=f"file:made-{n}.json", chat=ScriptedChatModel(responder), embedder=embedder, keys=keys
            )
            built.append((participant.id, agent.id))
    door = AgentDoor(chat=chat, embedder=embedder, keys=keys, memory_token_budget=4000, calls_in_flight=calls_in_flight)
    return door, keys, built


class Watching(ScriptedChatModel):
    """A chat model that, on every call, counts this database's connections idle inside a transaction."""

    def __init__(self, url: str) -> None:
        super().__init__(responder)
        self.open_transactions: list[int] = []
        self._watch = create_engine(url, isolation_level="AUTOCOMMIT")

    def complete(self, request):  # type: ignore[no-untyped-def]
        with self._watch.connect() as conn:
            self.open_transactions.append(
                conn.scalar(
                    text(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()"
                    )
                )
            )
        return super().complete(request)
