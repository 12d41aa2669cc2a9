"""Operator commands: clients, and verifying the audit log (which names tampering)."""

import json
import os
import re
from pathlib import Path

from sqlalchemy import create_engine, text

from agentbank.db.embedded import start_embedded_server
from tests.app.test_cli import agentbank


def test_clients_and_audit_verification():
    assert agentbank("db", "upgrade").returncode == 0
    created = agentbank("clients", "create", "Ada's team", "--scope", "aggregate:read", "--scope", "projects:apply")
    assert created.returncode == 0, created.stderr
    client_id = re.search(r"client_id:\s+(\S+)", created.stdout).group(1)
    assert re.search(r"client_secret:\s+\S{30,}", created.stdout)
    listed = agentbank("clients", "list").stdout
    assert client_id in listed and "aggregate:read projects:apply" in listed

    assert "checkpoint at event" in agentbank("audit", "checkpoint").stdout
    assert agentbank("clients", "revoke", client_id).returncode == 0
    assert "revoked" in agentbank("clients", "list").stdout
    verified = agentbank("audit", "verify")
    assert verified.returncode == 0 and "verified 3 events" in verified.stdout  # create, checkpoint, revoke
    assert "newest outside checkpoint at 1" in verified.stdout and "uncovered events 2–3" in verified.stdout
    outside = Path(os.environ["AGENTBANK_DATA_DIR"]) / "audit-checkpoints" / "checkpoints.jsonl"
    assert len(outside.read_text().splitlines()) == 1

    bad = agentbank("clients", "create", "x", "--scope", "everything")
    assert bad.returncode == 1 and "unknown or missing scopes: everything" in bad.stderr
    revoked = agentbank("clients", "link-person", client_id, "ada@example.org")
    assert revoked.returncode == 1 and "no active client" in revoked.stderr  # a revoked client signs nobody in

    # Someone with the database's owner rights edits an event behind the application's back.
    server = start_embedded_server(Path(os.environ["AGENTBANK_DATA_DIR"]) / "postgres")
    engine = create_engine(server.url)
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE audit_events DISABLE TRIGGER USER"))
        conn.execute(text("UPDATE audit_events SET actor_id = 'someone-else' WHERE seq = 2"))
        conn.execute(text("ALTER TABLE audit_events ENABLE TRIGGER USER"))
    engine.dispose()
    tampered = agentbank("audit", "verify")
    assert tampered.returncode == 1 and "edited event 2 was edited" in tampered.stdout

    # A witness's copy is read too; one edited by hand (a seq changed without the key) is refused.
    witness = outside.with_name("witness.jsonl")
    entry = json.loads(outside.read_text())
    witness.write_text(json.dumps(entry) + "\n" + json.dumps({**entry, "seq": 9}) + "\n")
    held = agentbank("audit", "verify", "--witness", str(witness))
    assert held.returncode == 1 and "bad_signature" in held.stdout  # a seq changed without the key


def test_a_person_is_linked_to_a_client_for_the_consoles():
    assert agentbank("db", "upgrade").returncode == 0
    created = agentbank("clients", "create", "Reviewers", "--scope", "review")
    client_id = re.search(r"client_id:\s+(\S+)", created.stdout).group(1)
    linked = agentbank("clients", "link-person", client_id, "Ada@Example.org")
    assert linked.returncode == 0 and f"ada@example.org may sign in as {client_id}" in linked.stdout
    again = agentbank("clients", "link-person", client_id, "ada@example.org")
    assert again.returncode == 1 and "already linked" in again.stderr
    assert agentbank("clients", "link-person", client_id, "not-an-address").returncode == 1
