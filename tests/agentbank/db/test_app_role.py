"""The embedded default connects as the application role, which cannot switch off or rewrite the audit log."""

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from agentbank.audit.log import SYSTEM, record
from agentbank.core.settings import Settings
from agentbank.db import transaction
from agentbank.db.embedded import stop_embedded_server
from app.opening import open_bank


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    settings = Settings(data_dir=tmp_path_factory.mktemp("app-role"), chat_provider="fake", embedder_provider="fake")
    try:
        with open_bank(settings, models=False) as opened:
            with transaction(opened.sessions) as session:
                record(session, SYSTEM, "check", "admin")  # the application appends as usual
            yield opened
    finally:
        stop_embedded_server(settings.postgres_dir)


def refused(bank, statement: str) -> str:
    """Run ``statement`` on the application's own connection; return the database's refusal."""
    with pytest.raises(DBAPIError) as raised, bank.engine.begin() as conn:
        conn.execute(text(statement))
    return str(raised.value.orig)


def test_the_application_is_neither_superuser_nor_owner(bank):
    with bank.engine.connect() as conn:
        user, superuser = conn.execute(
            text("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")
        ).one()
        owner = conn.scalar(text("SELECT tableowner FROM pg_tables WHERE tablename = 'audit_events'"))
        events = conn.scalar(text("SELECT count(*) FROM audit_events"))
    assert (user, superuser) == ("agentbank_app", False)
    assert owner != "agentbank_app"
    assert events == 1


@pytest.mark.parametrize("table", ["audit_events", "audit_checkpoints"])
def test_the_application_cannot_disable_the_triggers(bank, table):
    assert "must be owner" in refused(bank, f"ALTER TABLE {table} DISABLE TRIGGER USER")
    assert "must be owner" in refused(bank, f"ALTER TABLE {table} DISABLE TRIGGER ALL")
    assert "must be owner" in refused(bank, f"DROP TRIGGER {table}_append_only ON {table}")


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_events SET actor_id = 'someone-else'",
        "DELETE FROM audit_events",
        "TRUNCATE audit_events",
        "UPDATE audit_checkpoints SET seq = 0",
        "DELETE FROM audit_checkpoints",
        "TRUNCATE audit_checkpoints",
    ],
)
def test_the_application_cannot_rewrite_the_log(bank, statement):
    assert "permission denied" in refused(bank, statement)


def test_the_application_cannot_become_the_owner(bank):
    assert "permission denied" in refused(bank, "SET ROLE postgres")
    assert "permission denied" in refused(bank, "CREATE TABLE audit_shadow (seq bigint)")
