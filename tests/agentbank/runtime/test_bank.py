"""Opening the bank: the embedded database is migrated on first use; a configured server is not touched."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings
from agentbank.db.embedded import stop_embedded_server
from app.opening import open_bank
from migrations.runner import current_revision, head_revision


@pytest.fixture
def empty_database(database_url: str):
    name = f"agentbank_empty_{uuid.uuid4().hex[:10]}"
    admin = create_engine(database_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield make_url(database_url).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    admin.dispose()


def test_a_configured_server_is_never_migrated_behind_the_operators_back(empty_database):
    with (
        pytest.raises(ConfigurationError, match="schema is at nothing") as raised,
        open_bank(Settings(database_url=empty_database), models=False),
    ):
        pass
    assert raised.value.hint == "run `agentbank db upgrade`"


def test_the_embedded_database_is_migrated_on_first_use(tmp_path):
    settings = Settings(data_dir=tmp_path / "fresh")
    try:
        with open_bank(settings, models=False) as bank, bank.engine.connect() as conn:
            assert current_revision(conn) == head_revision()
    finally:
        stop_embedded_server(settings.postgres_dir)
