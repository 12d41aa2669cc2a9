"""Pooled connections: pinged only after they sat idle, and a connection that went away is replaced."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import DBAPIError

from agentbank.core.settings import Settings
from agentbank.db.connections import PING_AFTER_IDLE_S, make_engine, ping_after_idle


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Engine], list[object]]]:
    """Counts the pings an engine sends from now on; disposes of the engines counted."""
    engines: list[Engine] = []

    def count(engine: Engine) -> list[object]:
        sent: list[object] = []
        ping = engine.dialect.do_ping

        def counting(dbapi_connection: object) -> bool:
            sent.append(dbapi_connection)
            return ping(dbapi_connection)

        monkeypatch.setattr(engine.dialect, "do_ping", counting)
        engines.append(engine)
        return sent

    yield count
    for engine in engines:
        engine.dispose()


def backend(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.scalar(text("SELECT pg_backend_pid()")))


def terminate(engine: Engine, pid: int) -> None:
    """End a server process from outside the pool, as a database restart or a dropped network would."""
    outside = create_engine(engine.url)
    with outside.connect() as conn:
        conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    outside.dispose()


def test_the_banks_connections_in_use_a_moment_ago_are_not_pinged(fresh_database, counted, tmp_path):
    engine = make_engine(Settings(data_dir=tmp_path, database_url=SecretStr(fresh_database)))
    sent = counted(engine)
    assert len({backend(engine) for _ in range(20)}) == 1  # one pooled connection, checked out 20 times
    assert sent == [] and PING_AFTER_IDLE_S >= 1.0


def test_an_idle_connection_that_went_away_is_replaced_before_use(fresh_database, counted):
    engine = create_engine(fresh_database)
    ping_after_idle(engine, idle_s=0.0)  # every connection back in the pool counts as idle
    sent = counted(engine)
    gone = backend(engine)
    terminate(engine, gone)
    pids = {backend(engine), backend(engine)}  # each checkout pings; the dead one is replaced, not used
    assert gone not in pids and sent


def test_a_connection_that_breaks_within_the_idle_time_fails_once_and_the_pool_recovers(fresh_database, counted):
    engine = create_engine(fresh_database)
    ping_after_idle(engine)
    sent = counted(engine)
    gone = backend(engine)
    terminate(engine, gone)
    with pytest.raises(DBAPIError) as failed:
        backend(engine)
    assert failed.value.connection_invalidated
    assert backend(engine) != gone and sent == []  # the pool's older connections were discarded
