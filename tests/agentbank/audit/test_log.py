"""The audit log: appends in the caller's transaction, and every kind of tampering is found and named."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError

from agentbank.audit.checkpoints import checkpoint_message
from agentbank.audit.checkpoints import sign_head as checkpoint
from agentbank.audit.log import GENESIS, SYSTEM, Actor, event_hash, record, sequence
from agentbank.audit.signing_keys import AuditSigner
from agentbank.audit.verification import verify_log
from agentbank.db.models import AuditEvent

SIGNER = AuditSigner.from_secret("audit-test-secret-" * 3)
RESEARCHER = Actor("client", "team-a")


def write(db, n: int) -> None:
    for i in range(n):
        record(db, RESEARCHER, "aggregate.read", "open", details={"items": [f"item{i}"], "n": i})
    assert sequence(db) == n


def tamper(db, sql: str, **params) -> None:
    # Even the database owner has to switch the append-only triggers off first; verification still sees it.
    db.execute(text("ALTER TABLE audit_events DISABLE TRIGGER USER"))
    db.execute(text(sql), params)
    db.execute(text("ALTER TABLE audit_events ENABLE TRIGGER USER"))


def kinds(db) -> list[tuple[str, int | None]]:
    db.expire_all()
    return [(f.kind, f.seq) for f in verify_log(db, SIGNER.public_key).findings]


def test_chain_verifies_and_links_each_event_to_the_last(db):
    write(db, 5)
    first, second = db.scalars(select(AuditEvent).order_by(AuditEvent.seq).limit(2))
    assert (first.seq, first.prev_hash) == (1, GENESIS)
    assert second.prev_hash == first.hash == event_hash(GENESIS, first)
    result = verify_log(db, SIGNER.public_key)
    assert result.ok and result.events == 5 and result.head_seq == 5


def test_edit_is_detected_and_named(db):
    write(db, 6)
    tamper(db, 'UPDATE audit_events SET details = \'{"items": ["other"], "n": 3}\' WHERE seq = 4')
    assert kinds(db) == [("edited", 4)]


def test_deletion_is_detected_and_named(db):
    write(db, 6)
    tamper(db, "DELETE FROM audit_events WHERE seq = 3")
    assert kinds(db) == [("deleted", 3)]


def test_reordering_is_detected_and_named(db):
    write(db, 6)
    tamper(db, "UPDATE audit_events SET seq = -1 WHERE seq = 3")
    tamper(db, "UPDATE audit_events SET seq = 3 WHERE seq = 4")
    tamper(db, "UPDATE audit_events SET seq = 4 WHERE seq = -1")
    assert kinds(db) == [("reordered", 3), ("reordered", 4), ("reordered", 5)]


def test_truncation_after_a_checkpoint_is_detected(db):
    write(db, 6)
    assert checkpoint(db, SIGNER).seq == 6
    tamper(db, "DELETE FROM audit_events WHERE seq > 4")
    assert kinds(db) == [("truncated", 5)]


def test_a_forged_checkpoint_row_is_reported_and_ignored(db):
    # The application's role may insert checkpoint rows (workers sign as it): one the bank's key did not
    # sign proves nothing, and must not make every later verification fail.
    write(db, 4)
    checkpoint(db, SIGNER)
    forger = AuditSigner.from_secret("someone-else-" * 4)
    forged = forger.sign(checkpoint_message(4, b"x" * 32, datetime.now(UTC)))
    db.execute(
        text("INSERT INTO audit_checkpoints (seq, head_hash, signed_at, key_id, signature) VALUES (4, :h, :t, :k, :s)"),
        {"h": b"x" * 32, "t": datetime.now(UTC), "k": SIGNER.key_id, "s": forged},
    )
    assert kinds(db) == []
    result = verify_log(db, SIGNER.public_key)
    assert result.ok and result.ignored == [4] and result.stored == 1
    assert any("not signed by the bank's keys (at 4): ignored" in note for note in result.notes)


def test_the_log_is_append_only_for_everyone_and_the_app_role_cannot_rewrite(db):
    write(db, 2)
    with pytest.raises(DBAPIError, match="append-only"), db.begin_nested():
        db.execute(text("UPDATE audit_events SET action = 'x' WHERE seq = 1"))
    with pytest.raises(DBAPIError, match="append-only"), db.begin_nested():
        db.execute(text("DELETE FROM audit_events WHERE seq = 1"))
    with db.begin_nested():
        db.execute(text("SET LOCAL ROLE agentbank_app"))
        record(db, SYSTEM, "check", "admin")  # the application can append
        for statement in ("UPDATE audit_events SET action = 'x'", "DELETE FROM audit_checkpoints"):
            with pytest.raises(DBAPIError, match="permission denied"), db.begin_nested():
                db.execute(text(statement))
        with pytest.raises(DBAPIError, match="must be owner"), db.begin_nested():
            db.execute(text("ALTER TABLE audit_events DISABLE TRIGGER USER"))
        with pytest.raises(DBAPIError, match="permission denied"), db.begin_nested():
            db.execute(text("TRUNCATE audit_events"))


def test_ten_thousand_events_verify(db):
    # Built in memory with the same hashing as `record`, then stored in one statement.
    start = datetime(2026, 1, 1, tzinfo=UTC)
    prev, rows = GENESIS, []
    for seq in range(1, 10_001):
        event = AuditEvent(
            seq=seq,
            created_at=start + timedelta(seconds=seq),
            actor_kind="client",
            actor_id="team-a",
            action="job.answer",
            tier="restricted",
            details={"item": f"i{seq % 150}"},
            prev_hash=prev,
        )
        event.hash = prev = event_hash(prev, event)
        rows.append(event)
    db.add_all(rows)
    db.flush()
    record(db, RESEARCHER, "aggregate.read", "open")  # appends continue the stored chain
    checkpoint(db, SIGNER)
    result = verify_log(db, SIGNER.public_key)
    assert result.ok, result.findings[:3]
    assert result.events == 10_001 and result.checkpoint_seq == 10_001
    assert db.scalar(select(func.count()).select_from(AuditEvent)) == 10_001


@pytest.mark.parametrize(
    "statement",
    ["UPDATE audit_checkpoints SET seq = 0", "DELETE FROM audit_checkpoints", "TRUNCATE audit_checkpoints"],
)
def test_checkpoint_rows_are_append_only_even_for_the_owner(db, statement):
    write(db, 2)
    checkpoint(db, SIGNER)
    with pytest.raises(DBAPIError, match="audit_checkpoints is append-only"), db.begin_nested():
        db.execute(text(statement))
    with db.begin_nested():
        db.execute(text("SET LOCAL ROLE agentbank_app"))
        with pytest.raises(DBAPIError, match="permission denied"), db.begin_nested():
            db.execute(text(statement))
