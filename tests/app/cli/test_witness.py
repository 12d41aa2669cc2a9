"""Two independent witnesses, each `agentbank witness serve` in a process of its own with its own key and
directory, cosigning the bank's tree heads; a forked log refused, a rollback detected, and `audit verify`
asking both by default (`--witnesses N` sets how many it needs), so a rollback of the log and of its outside
file together is caught without a flag."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.orm import Session

from agentbank.audit.log import event_hash
from agentbank.db.embedded import start_embedded_server
from agentbank.db.models import AuditEvent
from tests.support.command_line import agentbank

pytestmark = pytest.mark.cli

NAMES = ("w1.witness.example/audit", "w2.witness.example/audit")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _said(done: subprocess.CompletedProcess) -> str:
    return " ".join(done.stdout.split())


@pytest.fixture
def witnesses(tmp_path) -> Iterator[dict[str, str]]:
    """Both witnesses serving, trusting the bank's log key; yields the bank's AGENTBANK_AUDIT_WITNESSES."""
    assert agentbank("db", "upgrade").returncode == 0
    log_key = agentbank("audit", "note-key").stdout.strip()
    processes, configured = [], []
    for name in NAMES:
        directory = tmp_path / name.split(".")[0]
        key = agentbank("witness", "key", "--dir", str(directory), "--name", name).stdout.strip()
        port = free_port()
        command = [sys.executable, "-c", "from app.cli import main; main()", "witness", "serve",
                   "--dir", str(directory), "--name", name, "--log", log_key, "--port", str(port)]  # fmt: skip
        log = (tmp_path / f"{name.split('.')[0]}.log").open("w")
        processes.append((subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True), log))
        configured.append({"url": f"http://127.0.0.1:{port}", "key": key})
        deadline = time.monotonic() + 60
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert time.monotonic() < deadline, (tmp_path / f"{name.split('.')[0]}.log").read_text()
            time.sleep(0.2)
    try:
        yield {"AGENTBANK_AUDIT_WITNESSES": json.dumps(configured)}
    finally:
        for process, log in processes:
            process.terminate()
            process.wait(timeout=30)
            log.close()


def owner(statements: list[str]) -> None:
    """What the database's owner can do with the append-only triggers off."""
    server = start_embedded_server(Path(os.environ["AGENTBANK_DATA_DIR"]) / "postgres")
    engine = create_engine(server.url)
    tables = ("audit_events", "audit_checkpoints", "audit_cosignatures", "audit_tree_nodes")
    with engine.begin() as conn:
        for table in tables:
            conn.execute(text(f"ALTER TABLE {table} DISABLE TRIGGER USER"))
        for sql in statements:
            conn.execute(text(sql))
        if any("audit_events" in sql for sql in statements):  # a careful forger recomputes the chain
            prev = bytes(32)
            with Session(bind=conn) as session:
                for event in session.scalars(select(AuditEvent).order_by(AuditEvent.seq)).all():
                    new = event_hash(prev, event)
                    conn.execute(text("UPDATE audit_events SET prev_hash = :p, hash = :h WHERE seq = :s"),
                                 {"p": prev, "h": new, "s": event.seq})  # fmt: skip
                    prev = new
        for table in tables:
            conn.execute(text(f"ALTER TABLE {table} ENABLE TRIGGER USER"))
    engine.dispose()


def test_two_witnesses_cosign_refuse_a_fork_and_reveal_a_rollback(witnesses):
    for n in range(3):
        assert agentbank("clients", "create", f"team {n}", "--scope", "aggregate:read").returncode == 0
    first = agentbank("audit", "checkpoint", **witnesses)
    assert first.returncode == 0, first.stderr
    assert all(f"witness {name} cosigned the head of 3 events" in _said(first) for name in NAMES), first.stdout

    # Later heads are cosigned from the size each witness holds, with a consistency proof.
    assert agentbank("clients", "create", "team 3", "--scope", "aggregate:read").returncode == 0
    second = agentbank("audit", "checkpoint", **witnesses)
    assert _said(second).count("cosigned the head of 5 events") == 2, second.stdout
    verified = agentbank("audit", "verify", "--witnesses", "2", **witnesses)
    assert verified.returncode == 0, verified.stdout
    assert f"cosigned at 5 by {', '.join(sorted(NAMES))}" in _said(verified)
    assert "Merkle tree checked against signed heads up to 5" in _said(verified)
    # Without the witnesses' keys no cosignature counts.
    unconfigured = agentbank("audit", "verify", "--witnesses", "1")
    assert unconfigured.returncode == 1 and "names 0" in unconfigured.stderr

    # A fork: the owner rewrites event 2, recomputes the chain, cuts the log back to the 5 events the witnesses
    # hold, and signs a head of 5 with the bank's own key. The witnesses refuse it.
    owner(["UPDATE audit_events SET actor_id = 'someone-else' WHERE seq = 2", "DELETE FROM audit_events WHERE seq > 5"])
    forked = agentbank("audit", "checkpoint", **witnesses)
    assert forked.returncode == 0, forked.stderr
    assert _said(forked).count("refused (409)") == 2 and "the log forked" in _said(forked), forked.stdout

    # A rollback: the log restored to its first three events (the checkpoints and cosignatures after them gone
    # with the database). Each witness answers with the size it holds, larger than the log: said loudly.
    owner(["DELETE FROM audit_events WHERE seq > 3", "DELETE FROM audit_checkpoints WHERE seq > 3",
           "DELETE FROM audit_cosignatures"])  # fmt: skip
    rolled = agentbank("audit", "checkpoint", **witnesses)
    assert _said(rolled).count("has cosigned a log of 5 events, but this log has 3") == 2, rolled.stdout
    assert "rolled back" in _said(rolled)
    # And verification, against the outside file holding the cosigned heads, names the cut.
    found = agentbank("audit", "verify", "--witnesses", "2", **witnesses)
    assert found.returncode == 1 and "truncated" in _said(found), found.stdout


def owner_ids() -> tuple[int, int, int]:
    """The newest event, checkpoint and cosignature ids: where a backup taken now would end."""
    server = start_embedded_server(Path(os.environ["AGENTBANK_DATA_DIR"]) / "postgres")
    engine = create_engine(server.url)
    tables = ("audit_events", "audit_checkpoints", "audit_cosignatures")
    with engine.connect() as conn:
        event, checkpoint, cosignature = (
            conn.execute(text(f"SELECT coalesce(max(id), 0) FROM {table}")).scalar_one() for table in tables
        )
    engine.dispose()
    return event, checkpoint, cosignature


def test_plain_verify_asks_the_witnesses_and_catches_the_log_and_its_outside_file_rolled_back(witnesses):
    for n in range(2):
        assert agentbank("clients", "create", f"team {n}", "--scope", "aggregate:read").returncode == 0
    assert _said(agentbank("audit", "checkpoint", **witnesses)).count("cosigned the head of") == 2
    outside = Path(os.environ["AGENTBANK_DATA_DIR"]) / "audit-checkpoints" / "checkpoints.jsonl"
    backup, (event, checkpoint, cosignature) = outside.read_text(), owner_ids()  # a backup of both, now
    assert agentbank("clients", "create", "team 2", "--scope", "aggregate:read").returncode == 0
    assert _said(agentbank("audit", "checkpoint", **witnesses)).count("cosigned the head of") == 2
    verified = agentbank("audit", "verify", **witnesses)
    assert verified.returncode == 0 and _said(verified).count("holds this log's head") == 2, verified.stdout

    # Both restored from that backup together: everything the bank keeps agrees with itself.
    owner([f"DELETE FROM audit_events WHERE id > {event}", f"DELETE FROM audit_checkpoints WHERE id > {checkpoint}",
           f"DELETE FROM audit_cosignatures WHERE id > {cosignature}"])  # fmt: skip
    outside.write_text(backup)
    found = agentbank("audit", "verify", **witnesses)  # no flag: the configured witnesses are asked
    assert found.returncode == 1, found.stdout
    assert _said(found).count("rolled_back") == 2 and "the log was rolled back" in _said(found)


def test_verify_fails_without_a_signed_tree_head_outside_unless_told_none_exists_yet():
    assert agentbank("db", "upgrade").returncode == 0
    assert agentbank("clients", "create", "team", "--scope", "aggregate:read").returncode == 0
    assert agentbank("audit", "checkpoint").returncode == 0
    outside = Path(os.environ["AGENTBANK_DATA_DIR"]) / "audit-checkpoints" / "checkpoints.jsonl"
    # The outside copy as a bank kept it before the tree: checkpoints without their tree head.
    entries = [json.loads(line) for line in outside.read_text().splitlines()]
    outside.write_text("".join(json.dumps({k: v for k, v in e.items() if k != "note"}) + "\n" for e in entries))
    owner(["UPDATE audit_checkpoints SET note = NULL"])
    missing = agentbank("audit", "verify")
    assert missing.returncode == 2, missing.stdout
    assert "no signed tree head" in _said(missing) and "not verified" in _said(missing)
    told = agentbank("audit", "verify", "--without-outside-record")
    assert told.returncode == 0 and "without an outside record" in _said(told)
    # The next checkpoint signs a tree head, and verification stands on it.
    assert agentbank("audit", "checkpoint").returncode == 0
    assert agentbank("audit", "verify").returncode == 0
