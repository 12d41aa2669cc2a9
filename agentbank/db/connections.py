"""Engines and sessions. The caller (a request, a job, a command) owns the transaction."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
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


def make_engine(settings: Settings, **kwargs: object) -> Engine:
    """An engine for the configured database (the embedded server is started on demand)."""
    # Parameters stay out of error messages and logs: they can hold participant data.
    return create_engine(database_url(settings), pool_pre_ping=True, hide_parameters=True, **kwargs)


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
