"""Operator commands: clients, and verifying the audit log (which names tampering)."""

import json
import os
import re
from pathlib import Path

from sqlalchemy import create_engine, select, text
from sqlalchemy.orm import Session

from agentbank.audit.log import event_hash
from agentbank.db.embedded import start_embedded_server
from agentbank.db.models import AuditEvent
from tests.support.command_line import agentbank


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


def _owner(statements: list[tuple[str, dict]]) -> None:
    """What someone with the database owner's rights does, with the append-only triggers off."""
    server = start_embedded_server(Path(os.environ["AGENTBANK_DATA_DIR"]) / "postgres")
    engine = create_engine(server.url)
    with engine.begin() as conn:
        for table in ("audit_events", "audit_checkpoints"):
            conn.execute(text(f"ALTER TABLE {table} DISABLE TRIGGER USER"))
        for sql, params in statements:
            conn.execute(text(sql), params)
        for table in ("audit_events", "audit_checkpoints"):
            conn.execute(text(f"ALTER TABLE {table} ENABLE TRIGGER USER"))
    engine.dispose()


def _rechained() -> list[tuple[str, dict]]:
    """The statements that recompute every hash from the first event, as a careful forger would."""
    server = start_embedded_server(Path(os.environ["AGENTBANK_DATA_DIR"]) / "postgres")
    engine = create_engine(server.url)
    statements, prev = [], bytes(32)
    with Session(engine) as session:
        for event in session.scalars(select(AuditEvent).order_by(AuditEvent.seq)):
            new = event_hash(prev, event)
            statements.append(("UPDATE audit_events SET prev_hash = :p, hash = :h WHERE seq = :s",
                               {"p": prev, "h": new, "s": event.seq}))  # fmt: skip
            prev = new
    engine.dispose()
    return statements


def _said(done) -> str:
    return " ".join(done.stdout.split())


def test_audit_verification_fails_closed_without_the_outside_record():
    assert agentbank("db", "upgrade").returncode == 0
    for n in range(3):
        assert agentbank("clients", "create", f"team {n}", "--scope", "aggregate:read").returncode == 0
    assert "checkpoint at event 3" in agentbank("audit", "checkpoint").stdout
    outside = Path(os.environ["AGENTBANK_DATA_DIR"]) / "audit-checkpoints" / "checkpoints.jsonl"
    kept = outside.read_text()

    # The log cut, its checkpoint rows gone, and the outside file removed.
    _owner([("DELETE FROM audit_events WHERE seq > 2", {}), ("DELETE FROM audit_checkpoints", {})])
    outside.unlink()
    missing = agentbank("audit", "verify")
    assert missing.returncode == 2, missing.stdout
    assert "not verified" in _said(missing) and "missing or empty" in _said(missing)
    assert "verified 2 events" not in _said(missing)
    # Only when the operator says so, and then the output says what it is worth.
    told = agentbank("audit", "verify", "--without-outside-record")
    assert told.returncode == 0, told.stdout
    assert "without an outside record" in _said(told) and "could have cut or rewritten the log" in _said(told)
    assert "verified the stored chain of 2 events" in _said(told)

    # An event deleted and the chain recomputed, the outside file emptied: still no verification.
    _owner([("DELETE FROM audit_events WHERE seq = 1", {}), ("UPDATE audit_events SET seq = 1 WHERE seq = 2", {})])
    _owner(_rechained())
    outside.write_text("")
    emptied = agentbank("audit", "verify")
    assert emptied.returncode == 2 and "not verified" in _said(emptied)
    # With the outside record back, the rewrite is found.
    outside.write_text(kept)
    found = agentbank("audit", "verify")
    assert found.returncode == 1 and "truncated" in _said(found)


def test_a_junk_checkpoint_row_the_application_can_add_is_reported_and_ignored():
    assert agentbank("db", "upgrade").returncode == 0
    assert agentbank("clients", "create", "team", "--scope", "aggregate:read").returncode == 0
    assert agentbank("audit", "checkpoint").returncode == 0
    server = start_embedded_server(Path(os.environ["AGENTBANK_DATA_DIR"]) / "postgres")
    engine = create_engine(server.url)
    with engine.begin() as conn:  # as the application's role: it may insert rows (workers sign as it)
        conn.execute(text("SET LOCAL ROLE agentbank_app"))
        conn.execute(
            text("INSERT INTO audit_checkpoints (seq, head_hash, signed_at, key_id, signature) "
                 "VALUES (999999, :h, now(), 'junk', :s)"),
            {"h": b"\x00" * 32, "s": b"\x01" * 64},
        )  # fmt: skip
    engine.dispose()
    # It does not stop the next checkpoint, and verification reports it and goes on.
    assert "checkpoint at event 2" in agentbank("audit", "checkpoint").stdout
    verified = agentbank("audit", "verify")
    assert verified.returncode == 0, verified.stdout
    assert "not signed by the bank's keys (at 999999): ignored" in _said(verified)
    assert "verified 3 events" in _said(verified)
