"""`agentbank audit verify` asks the configured witnesses by default, so a rollback of the log and of its
outside file together is caught without a flag.

The attack: the database and the outside checkpoint file restored together to an earlier state (an old
backup of both, or both cut). Everything the bank keeps then agrees with itself, and a verification that
only reads what the bank keeps passes. The witnesses are the only ones who saw the later heads; plain
`audit verify` now asks each configured witness, and one that holds a larger log names the rollback.

The witnesses here are the real ``Witness`` (its rules, key and state directory), reached in process: the
HTTP client's ``post`` is routed to them, so nothing starts a server.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from agentbank.audit.log import Actor, record
from agentbank.audit.signing_keys import load_signer
from agentbank.audit.witnesses.server import Refusal, Witness
from agentbank.core.settings import Settings
from agentbank.db.models import AuditCheckpoint, AuditCosignature, AuditEvent
from app.cli import cli
from tests.support.factories import SECRET

NAMES = ("w1.witness.example/audit", "w2.witness.example/audit")
TEAM = Actor("client", "team-a")


class Witnesses:
    """Two witnesses the bank is configured with, each at its own URL; ``away`` ones cannot be reached."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        log_key = load_signer(Settings()).verifier
        self.by_url = {f"http://{name.split('.')[0]}.test": Witness(name, tmp_path / name.split(".")[0], [log_key])
                       for name in NAMES}  # fmt: skip
        self.away: set[str] = set()
        configured = [{"url": url, "key": w.verifier.vkey()} for url, w in self.by_url.items()]
        monkeypatch.setenv("AGENTBANK_AUDIT_WITNESSES", json.dumps(configured))
        monkeypatch.setattr(httpx, "post", self.post)

    def post(self, url: str, *, content: bytes, timeout: float) -> httpx.Response:
        base = url.removesuffix("/add-checkpoint")
        if base in self.away or base not in self.by_url:
            raise httpx.ConnectError("unreachable")
        try:
            return httpx.Response(200, text=self.by_url[base].add_checkpoint(content.decode()))
        except Refusal as refusal:
            return httpx.Response(refusal.status, text=refusal.body, headers={"content-type": refusal.content_type})


class Bank:
    """The bank's database (as its owner) and its outside file, as the command line sees them."""

    def __init__(self, url: str) -> None:
        self.engine = create_engine(url)
        self.outside = Settings().audit_checkpoint_path

    def write(self, n: int) -> None:
        with Session(self.engine) as session, session.begin():
            for i in range(n):
                record(session, TEAM, "aggregate.read", "open", details={"n": i})

    def snapshot(self) -> tuple[str, int, int, int]:
        """What a backup of the database and of the outside file taken now would hold."""
        with Session(self.engine) as session:
            ids = [session.scalar(select(func.coalesce(func.max(model.id), 0)))
                   for model in (AuditEvent, AuditCheckpoint, AuditCosignature)]  # fmt: skip
        return self.outside.read_text(), *ids

    def roll_back(self, snapshot: tuple[str, int, int, int]) -> None:
        """Both restored together: what came after the snapshot gone from the database and from the file."""
        outside, event, checkpoint, cosignature = snapshot
        tables = ("audit_events", "audit_checkpoints", "audit_cosignatures")
        with self.engine.begin() as conn:
            for table in tables:
                conn.execute(text(f"ALTER TABLE {table} DISABLE TRIGGER USER"))
            conn.execute(text("DELETE FROM audit_events WHERE id > :i"), {"i": event})
            conn.execute(text("DELETE FROM audit_checkpoints WHERE id > :i"), {"i": checkpoint})
            conn.execute(text("DELETE FROM audit_cosignatures WHERE id > :i"), {"i": cosignature})
            for table in tables:
                conn.execute(text(f"ALTER TABLE {table} ENABLE TRIGGER USER"))
        self.outside.write_text(outside)


@pytest.fixture
def bank(fresh_database, monkeypatch):
    monkeypatch.setenv("AGENTBANK_DATABASE_URL", fresh_database)
    monkeypatch.setenv("AGENTBANK_SECRET_KEY", SECRET)
    opened = Bank(fresh_database)
    yield opened
    opened.engine.dispose()


def run(*args: str):
    return CliRunner().invoke(cli, ["audit", *args])


def said(result) -> str:
    return " ".join(result.output.split())


def test_plain_verify_catches_a_rollback_of_the_log_and_its_outside_file_together(bank, tmp_path, monkeypatch):
    witnesses = Witnesses(tmp_path, monkeypatch)
    bank.write(3)
    assert run("checkpoint").exit_code == 0
    backup = bank.snapshot()  # a backup of both, with the first head cosigned by both witnesses
    bank.write(4)
    second = run("checkpoint")
    assert said(second).count("cosigned the head of") == 2, second.output
    assert run("verify").exit_code == 0

    bank.roll_back(backup)
    found = run("verify")  # no flag: the configured witnesses are asked
    assert found.exit_code == 1, found.output
    assert said(found).count("rolled_back") == 2 and "the log was rolled back" in said(found)
    # Not asking them, the operator is still told: the tiles kept outside hold the events rolled back.
    lowered = run("verify", "--witnesses", "0")
    assert lowered.exit_code == 1 and "truncated" in said(lowered) and "rolled_back" not in said(lowered)

    witnesses.away = set(witnesses.by_url)  # rolled back and no witness to ask: not verified, never passed
    unasked = run("verify")
    assert unasked.exit_code != 0 and "could not be asked" in said(unasked), unasked.output


def test_verify_with_witnesses_configured_passes_and_counts_those_it_needs(bank, tmp_path, monkeypatch):
    witnesses = Witnesses(tmp_path, monkeypatch)
    bank.write(3)
    assert run("checkpoint").exit_code == 0
    bank.write(2)  # newer events, in no head yet: a witness behind the log is no rollback
    verified = run("verify")
    assert verified.exit_code == 0, verified.output
    assert all(f"witness {name} holds this log's head" in said(verified) for name in NAMES)

    witnesses.away = {"http://w2.test"}
    away = run("verify")  # both are needed by default, and one cannot be asked: fails closed
    assert away.exit_code == 2 and "1 of the 2 witnesses" in said(away), away.output
    assert run("verify", "--witnesses", "1").exit_code == 0  # lowered on purpose
    raised = run("verify", "--witnesses", "3")
    assert raised.exit_code != 0 and "names 2" in str(raised.exception)


def test_a_restore_keeps_the_events_since_the_backup_and_the_witnesses_go_on_cosigning(bank, tmp_path, monkeypatch):
    Witnesses(tmp_path, monkeypatch)
    bank.write(3)
    assert run("checkpoint").exit_code == 0
    backed = CliRunner().invoke(cli, ["backup", str(tmp_path / "backup")])
    assert backed.exit_code == 0, backed.output
    bank.write(4)  # signed and cosigned after the backup: in the witnesses' tree, not in the backup
    second = run("checkpoint")
    assert said(second).count("cosigned the head of") == 2, second.output
    bank.engine.dispose()  # a restore starts only with nobody connected

    restored = CliRunner().invoke(cli, ["restore", str(tmp_path / "backup"), "--yes"])
    assert restored.exit_code == 0, restored.output
    verified = run("verify")  # the witnesses' larger tree is a prefix of the restored log's
    assert verified.exit_code == 0, verified.output
    assert "put back from the tiles" in said(verified) and "rolled_back" not in said(verified)
    with Session(bank.engine) as session:
        actions = session.scalars(select(AuditEvent.action).where(AuditEvent.seq.is_not(None))
                                  .order_by(AuditEvent.seq)).all()  # fmt: skip
    assert "audit.kept_outside" in actions and actions.index("bank.restore") > actions.index("audit.kept_outside")
    bank.write(2)
    third = run("checkpoint")  # the restore is an event, and the witnesses cosign the log that goes on
    assert said(third).count("cosigned the head of") == 2, third.output
    assert run("verify").exit_code == 0
