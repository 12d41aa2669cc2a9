"""Tampering by someone who can rewrite the database, caught by checkpoints it cannot reach.

Each attack leaves the hash chain valid (hashes recomputed, checkpoint rows deleted or re-signed), so
the database alone proves nothing; the copy of the checkpoints kept outside it is what catches it.
"""

import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import sessionmaker

from agentbank.audit.checkpoints import (
    CheckpointFile,
    Schedule,
    SignedCheckpoint,
    checkpoint_message,
    publish_checkpoint,
)
from agentbank.audit.log import SYSTEM, Actor, event_hash, record, sequence
from agentbank.audit.signing_keys import AuditSigner
from agentbank.audit.verification import check_history, verify_log
from agentbank.db.models import AuditCheckpoint, AuditEvent

SIGNER = AuditSigner.from_secret("audit-test-secret-" * 3)
RESEARCHER = Actor("client", "team-a")
REHASH = "UPDATE audit_events SET prev_hash = :p, hash = :h WHERE seq = :s"


class Log:
    """The log in the test's transaction, with the bank's outside file in a directory of its own."""

    def __init__(self, db, tmp_path) -> None:
        self.db = db
        self.sessions = sessionmaker(bind=db.connection(), join_transaction_mode="create_savepoint")
        self.outside = CheckpointFile(tmp_path / "witness" / "checkpoints.jsonl")

    def write(self, n: int) -> None:
        for i in range(n):
            record(self.db, RESEARCHER, "aggregate.read", "open", details={"n": i})
        self.db.flush()

    def publish(self, schedule: Schedule | None = None) -> SignedCheckpoint | None:
        return publish_checkpoint(self.sessions, SIGNER, self.outside, schedule)

    def findings(self, *, outside: bool = True) -> set[tuple[str, int | None]]:
        self.db.expire_all()
        points = self.outside.read()[0] if outside else None
        return {(f.kind, f.seq) for f in verify_log(self.db, SIGNER.public_key, points).findings}

    def as_owner(self, sql: str, **params) -> None:
        """What the database's owner can do: switch the append-only triggers off and change anything."""
        for table in ("audit_events", "audit_checkpoints"):
            self.db.execute(text(f"ALTER TABLE {table} DISABLE TRIGGER USER"))
        self.db.execute(text(sql), params)
        for table in ("audit_events", "audit_checkpoints"):
            self.db.execute(text(f"ALTER TABLE {table} ENABLE TRIGGER USER"))

    def rechain(self) -> None:
        """Recompute every hash from the first event, as a careful forger would after an edit or deletion."""
        self.db.expire_all()
        prev = bytes(32)
        for event in self.db.scalars(select(AuditEvent).order_by(AuditEvent.seq)):
            new = event_hash(prev, event)
            self.as_owner(REHASH, p=prev, h=new, s=event.seq)
            prev = new
        self.db.expire_all()


@pytest.fixture
def log(db, tmp_path) -> Log:
    return Log(db, tmp_path)


def test_tail_cut_after_the_last_outside_checkpoint_with_its_rows_deleted(log):
    log.write(6)
    assert log.publish().seq == 6
    log.as_owner("DELETE FROM audit_events WHERE seq > 4")
    log.as_owner("DELETE FROM audit_checkpoints")
    assert log.findings(outside=False) == set()  # the database alone shows nothing wrong
    assert log.findings() == {("truncated", 5), ("checkpoint_deleted", 6)}


def test_an_edit_with_the_chain_recomputed(log):
    log.write(6)
    log.publish()
    log.as_owner("""UPDATE audit_events SET details = '{"n": 99}' WHERE seq = 3""")
    log.rechain()
    assert log.findings() == {("rewritten", 6)}  # the stored row and the outside copy both say so


def test_a_deletion_with_the_chain_recomputed_and_the_checkpoint_rows_deleted(log):
    log.write(6)
    log.publish()
    log.as_owner("DELETE FROM audit_events WHERE seq = 3")
    # Shifted in two steps: one UPDATE meets its rows in storage order and would collide on the key.
    log.as_owner("UPDATE audit_events SET seq = -seq WHERE seq > 3")
    log.as_owner("UPDATE audit_events SET seq = -seq - 1 WHERE seq < 0")
    log.as_owner("DELETE FROM audit_checkpoints")
    log.rechain()
    assert log.findings(outside=False) == set()
    assert log.findings() == {("truncated", 6), ("checkpoint_deleted", 6)}


def test_a_rewrite_signed_over_by_a_later_checkpoint_breaks_consistency(log):
    log.write(4)
    log.publish()
    log.as_owner("""UPDATE audit_events SET details = '{"n": 99}' WHERE seq = 2""")
    log.rechain()
    log.write(2)
    log.publish()  # the next scheduled checkpoint signs the rewritten history
    assert log.findings() == {("rewritten", 4), ("inconsistent", 6)}


def test_a_checkpoint_re_signed_with_the_default_secret_is_refused(log):
    log.write(4)
    log.publish()
    log.as_owner("""UPDATE audit_events SET details = '{"n": 99}' WHERE seq = 2""")
    log.rechain()
    head = log.db.scalar(select(AuditEvent.hash).where(AuditEvent.seq == 4))
    forger = AuditSigner.from_secret("change-me")
    signed_at = datetime.now(UTC)
    forged = SignedCheckpoint(4, head, signed_at, forger.key_id, b"")
    log.as_owner("DELETE FROM audit_checkpoints")
    log.db.add(
        AuditCheckpoint(
            seq=4, head_hash=head, signed_at=signed_at, key_id=forger.key_id, signature=forger.sign(forged.message())
        )
    )
    # The re-signed row is ignored (no trusted key signed it); the outside copy shows the rewrite and the loss.
    assert log.findings() == {("rewritten", 4), ("checkpoint_deleted", 4)}
    assert verify_log(log.db, SIGNER.public_key, log.outside.read()[0]).ignored == [4]


def test_a_fabricated_well_chained_event_is_only_seen_as_uncovered(log):
    log.write(4)
    log.publish()
    with log.db.begin_nested():
        log.db.execute(text("SET LOCAL ROLE agentbank_app"))  # the application's own right to append
        log.db.execute(
            text(
                "INSERT INTO audit_events (created_at, actor_kind, actor_id, action, tier, details) "
                "VALUES (:t, 'client', 'team-b', 'aggregate.read', 'open', '{}')"
            ),
            {"t": datetime.now(UTC)},
        )
        log.db.execute(text("RESET ROLE"))
    sequence(log.db)  # chained like any other (one written claiming a place is quarantined instead)
    result = verify_log(log.db, SIGNER.public_key, log.outside.read()[0])
    # What can be said: no outside checkpoint covers it yet. What cannot: that it is not real.
    assert result.ok and result.uncovered == (5, 5) and result.outside_seq == 4
    log.publish()
    result = verify_log(log.db, SIGNER.public_key, log.outside.read()[0])
    assert result.ok and result.uncovered is None


def test_witness_history_alone_shows_forks_and_a_shrinking_log():
    def signed(seq: int, head: bytes, minutes: int) -> SignedCheckpoint:
        at = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes)
        return SignedCheckpoint(seq, head, at, SIGNER.key_id, SIGNER.sign(checkpoint_message(seq, head, at)))

    history = [signed(5, b"a" * 32, 0), signed(5, b"b" * 32, 1), signed(3, b"c" * 32, 2)]
    assert [(f.kind, f.seq) for f in check_history(history, SIGNER.public_key, "here")] == [
        ("inconsistent", 5), ("inconsistent", 3),
    ]  # fmt: skip


def test_workers_sign_after_n_events_or_t_seconds_and_append_outside(log):
    schedule = Schedule(events=3, interval_s=3600)
    assert log.publish(schedule) is None  # an empty log
    log.write(1)
    assert log.publish(schedule).seq == 1  # the first events are signed at once
    log.write(2)
    assert log.publish(schedule) is None  # 2 < 3 uncovered, and the last checkpoint is fresh
    log.write(1)
    assert log.publish(schedule).seq == 4
    log.write(1)
    assert log.publish(Schedule(events=100, interval_s=0.3)) is None
    time.sleep(0.3)
    assert log.publish(Schedule(events=100, interval_s=0.3)).seq == 5
    assert [p.seq for p in log.outside.read()[0]] == [1, 4, 5]
    assert log.findings() == set()


def test_an_unreadable_line_in_the_outside_file_is_reported(log):
    log.write(1)
    log.publish()
    with log.outside.path.open("a") as out:
        out.write("not a checkpoint\n")
    points, problems = log.outside.read()
    assert len(points) == 1 and problems == [f"{log.outside.path}, entry 2, is not a checkpoint"]


def test_system_events_chain_like_any_other(log):
    record(log.db, SYSTEM, "check", "admin")
    log.publish()
    assert log.findings() == set()
