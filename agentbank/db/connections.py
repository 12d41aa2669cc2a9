"""Engines and sessions. The caller (a request, a job, a command) owns the transaction."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, InvalidatePoolError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import QueuePool

from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings
from agentbank.db.embedded import start_embedded_server
from agentbank.db.roles import app_role_url


def normalize_url(url: str) -> str:
    """Accept the usual PostgreSQL URL spellings and use the psycopg 3 driver."""
    for prefix in ("postgres://", "postgresql://", "postgresql+psycopg2://"):
        if url.startswith(prefix):
            url = "postgresql+psycopg://" + url[len(prefix) :]
            break
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ConfigurationError(
            "AGENTBANK_DATABASE_URL is not a database URL",
            hint="use postgresql://user:password@host:5432/dbname",
        ) from exc
    if parsed.get_backend_name() != "postgresql":
        raise ConfigurationError(
            f"AGENTBANK_DATABASE_URL names a {parsed.get_backend_name()} database; the bank needs PostgreSQL"
        )
    return url


def database_url(settings: Settings) -> str:
    """The URL the application connects with, starting the embedded server when no URL is set.

    On the embedded server that is the application role, never the superuser, as in production: run
    the migrations first (``migrate_database``), which gives the role its login.
    """
    if settings.database_url is not None:
        return normalize_url(settings.database_url.get_secret_value())
    return app_role_url(start_embedded_server(settings.postgres_dir).url)


def owner_database_url(settings: Settings) -> str:
    """The URL migrations run with: the owner of the tables (the embedded server's superuser)."""
    for configured in (settings.migration_database_url, settings.database_url):
        if configured is not None:
            return normalize_url(configured.get_secret_value())
    return start_embedded_server(settings.postgres_dir).url


# A connection back in the pool for longer than this is pinged before it is used again.
PING_AFTER_IDLE_S = 5.0
_IDLE_SINCE = "agentbank.idle_since"


def make_engine(settings: Settings, **kwargs: object) -> Engine:
    """An engine for the configured database (the embedded server is started on demand)."""
    # Parameters stay out of error messages and logs: they can hold participant data.
    engine = create_engine(database_url(settings), hide_parameters=True, **kwargs)
    ping_after_idle(engine)
    return engine


def ping_after_idle(engine: Engine, idle_s: float = PING_AFTER_IDLE_S) -> None:
    """Ping a pooled connection on checkout only when it sat idle for ``idle_s`` or more.

    ``pool_pre_ping`` pings on every checkout: a round trip for each of the many short transactions of a
    busy worker, whose connections were in use a moment ago. A connection idle for a while (a database
    restarted overnight, a firewall that drops quiet connections) is still pinged, and a failed ping
    discards every connection pooled before it, so the caller gets a new one. A connection that breaks
    within ``idle_s`` of its last use fails its statement instead, which discards the pool's older
    connections too (SQLAlchemy's handling of a disconnect): that unit of work fails once, and its
    caller's retry (a task's, a request's) finds fresh connections.
    """
    dialect = engine.dialect

    @event.listens_for(engine.pool, "checkin")
    def _idle_from(_dbapi_connection: Any, record: Any) -> None:
        if record is not None:
            record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine.pool, "checkout")
    def _ping_if_idle(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        idle_since = record.info.pop(_IDLE_SINCE, None)
        if idle_since is None or time.monotonic() - idle_since < idle_s:
            return  # new, or in use a moment ago
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as exc:
            if dialect.is_disconnect(exc, dbapi_connection, None):
                raise InvalidatePoolError(f"a connection idle for {idle_s:.0f} s or more was gone") from exc
            raise


def pool_capacity(engine: Engine) -> int:
    """How many connections ``engine`` opens at most (its pool's size and overflow); 1 for a pool of one."""
    pool = engine.pool
    if isinstance(pool, QueuePool):
        return pool.size() + max(0, pool._max_overflow)  # no public accessor; stable across 1.4 and 2.x
    return 1


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded objects usable after commit."""
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work: commit when the block succeeds, roll back when it raises."""
    with factory() as session, session.begin():
        yield session
