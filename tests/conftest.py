"""Shared fixtures: an isolated environment, the network guard, and a migrated database."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from filelock import FileLock
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from migrations.runner import alembic_config, upgrade

pytest_plugins = [
    "tests.plugins.network_guard",
    "tests.plugins.browser_tools",
    "tests.plugins.model_budget",
    # Fixtures the tests of several modules share, defined once in the support package (never imported).
    "tests.support.answers",
    "tests.support.endpoints",
    "tests.support.evaluation",
    "tests.support.fuzzing",
    "tests.support.keys",
    "tests.support.output_check",
    "tests.support.restricted",
    "tests.support.team_instruments",
]


@pytest.fixture(autouse=True)
def _isolated_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's AGENTBANK_* settings or writes to the real data directory."""
    for name in list(os.environ):
        if name.startswith("AGENTBANK_") and name != "AGENTBANK_TEST_DATABASE_URL":
            monkeypatch.delenv(name)
    monkeypatch.setenv("AGENTBANK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AGENTBANK_CHAT_PROVIDER", "fake")
    monkeypatch.setenv("AGENTBANK_EMBEDDER_PROVIDER", "fake")
    monkeypatch.setenv("AGENTBANK_TRANSCRIBER", "fake")
    monkeypatch.setenv("AGENTBANK_SPEAKER", "fake")


@pytest.fixture(scope="session")
def database_url(worker_id: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real PostgreSQL: AGENTBANK_TEST_DATABASE_URL, or an embedded server in a temporary directory.

    With several test workers (``pytest -n 2``) they share one embedded server, each with a database
    of its own; the server stops when the last worker exits. The directory is outside the home
    directory because, as root, the embedded server opens every parent of its data directory to others.
    """
    external = os.environ.get("AGENTBANK_TEST_DATABASE_URL")
    if external:
        yield external
        return
    if worker_id == "master":  # one process: a server of its own, stopped and removed at the end
        root = Path(tempfile.mkdtemp(prefix="agentbank-test-"))
        pgdata = root / "postgres"
        server = start_embedded_server(pgdata)
        try:
            yield server.url
        finally:
            stop_embedded_server(pgdata)
            shutil.rmtree(root, ignore_errors=True)
        return
    shared = tmp_path_factory.getbasetemp().parent  # the same for every worker of this run
    name = f"agentbank_test_{worker_id}"
    # One worker at a time starts (or joins) the server and migrates its database: the first migration
    # creates the application role, which belongs to the whole server.
    with FileLock(shared / "postgres.lock"):
        server = start_embedded_server(shared / "postgres")
        admin = create_engine(server.url, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        admin.dispose()
        url = make_url(server.url).set(database=name).render_as_string(hide_password=False)
        upgrade(alembic_config(url))
    yield url


@pytest.fixture(scope="session")
def engine(database_url: str) -> Iterator[Engine]:
    """An engine on a database built by running every migration (never ``create_all``)."""
    upgrade(alembic_config(database_url))
    engine = create_engine(database_url, hide_parameters=True)
    yield engine
    engine.dispose()


@pytest.fixture
def db(engine: Engine) -> Iterator[Session]:
    """A session inside one transaction that is rolled back after the test; commits become savepoints."""
    with engine.connect() as conn:
        outer = conn.begin()
        session = Session(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        try:
            yield session
        finally:
            session.close()
            outer.rollback()


@contextmanager
def migrated_database(database_url: str) -> Iterator[str]:
    """A new database on the test server, migrated, dropped afterwards; yields its URL."""
    name = f"agentbank_{uuid.uuid4().hex[:12]}"
    admin = create_engine(database_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(database_url).set(database=name).render_as_string(hide_password=False)
    upgrade(alembic_config(url))
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def fresh_database(database_url: str) -> Iterator[str]:
    """A new, migrated database on the test server, for tests whose data other processes must see."""
    with migrated_database(database_url) as url:
        yield url
