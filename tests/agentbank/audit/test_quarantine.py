"""Rows the sequencer did not place, written with the application's own role, never stop the log.

The application's role may insert audit events, and give a waiting event its place once (the sequencer
runs as it). An attacker holding that role tried three things: a plain INSERT of an event claiming a place
far ahead of the head (a gap), one claiming the next place with a junk hash, and placing a waiting event
with a junk hash through the column grant. Each used to stop every later checkpoint, fail every proof
beyond it, or make `audit verify` blame deleted or edited events for good. Now the row is quarantined
(counted, never chained), or refused, and signing, proofs and verification go on.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.exc import DBAPIError

from agentbank.audit import tree
from agentbank.audit.checkpoints import CheckpointFile, publish_checkpoint, sign_head
from agentbank.audit.entries import leaf
from agentbank.audit.log import Actor, record, sequence
from agentbank.audit.merkle import verify_inclusion
from agentbank.audit.notes import Note, TreeHead
from agentbank.audit.sequencer import Sequencer
from agentbank.audit.signing_keys import AuditSigner
from agentbank.audit.verification import verify_log
from agentbank.db import make_sessionmaker, transaction
from agentbank.db.models import AuditEvent
from agentbank.db.roles import app_role_url, enable_app_login
from agentbank.participants.portal import uses_of_agent

SIGNER = AuditSigner.from_secret("audit-quarantine-secret-" * 3)
TEAM = Actor("client", "team-a")
JUNK = b"\xee" * 32
FORGED = (
    "INSERT INTO audit_events (seq, created_at, actor_kind, actor_id, action, tier, details, prev_hash, hash) "
    "VALUES (:seq, now(), 'client', 'intruder', 'aggregate.read', 'open', '{}', :prev, :hash)"
)


def write(db, n: int) -> None:
    for i in range(n):
        record(db, TEAM, "aggregate.read", "open", details={"n": i})
    db.flush()
    sequence(db)


def head(db) -> tuple[int, bytes]:
    row = db.execute(select(AuditEvent.seq, AuditEvent.hash).order_by(AuditEvent.seq.desc().nulls_last()).limit(1))
    seq, digest = row.one()
    return seq, digest


@contextmanager
def as_app(db) -> Iterator[None]:
    """The statements in the block run as the application's role, as the bank's processes do."""
    db.execute(text("SET LOCAL ROLE agentbank_app"))
    try:
        yield
    finally:
        db.execute(text("RESET ROLE"))


def proven(db, seq: int, size: int, root: bytes) -> bool:
    event = db.scalars(select(AuditEvent).where(AuditEvent.seq == seq)).one()
    return verify_inclusion(leaf(event), seq - 1, size, tree.inclusion(db, seq, size), root)


def signed_root(row) -> tuple[int, bytes]:
    tree_head = TreeHead.parse(Note.parse(row.note).text)
    return tree_head.size, tree_head.root


def test_an_event_inserted_far_ahead_with_the_app_role_is_quarantined_and_the_log_goes_on(fresh_database, tmp_path,
                                                                                          caplog):  # fmt: skip
    enable_app_login(fresh_database)
    engine = create_engine(app_role_url(fresh_database))  # the application's own role and sessions
    sessions = make_sessionmaker(engine)
    outside = CheckpointFile(tmp_path / "outside" / "checkpoints.jsonl")
    sequencer = Sequencer(sessions, interval_s=60)
    try:
        with transaction(sessions) as session:
            for i in range(5):
                record(session, TEAM, "aggregate.read", "open", details={"n": i})
        sequencer.run_until_done()
        assert publish_checkpoint(sessions, SIGNER, outside).seq == 5
        with transaction(sessions) as session:  # the attack: one plain INSERT, a place 100 ahead, a junk hash
            session.execute(text(FORGED), {"seq": 105, "prev": JUNK, "hash": JUNK})
        with transaction(sessions) as session:
            for i in range(3):
                record(session, TEAM, "aggregate.read", "open", details={"n": 5 + i})
        with caplog.at_level(logging.WARNING, logger="agentbank.audit.sequencer"):
            assert sequencer.run_until_done() == 3

        point = publish_checkpoint(sessions, SIGNER, outside)  # signing goes on, past the forged row
        assert point is not None and point.seq == 8
        with sessions() as session:
            size, root = signed_root(point)
            assert size == 8 and all(proven(session, seq, 8, root) for seq in (1, 5, 6, 8))
            assert session.scalar(select(func.count()).where(AuditEvent.seq > 8)) == 0
            result = verify_log(session, SIGNER.public_key, outside.read()[0])
        assert result.ok, result.findings
        assert result.head_seq == 8 and result.quarantined == 1 and result.unchained == 0
        assert any("1 row(s) quarantined" in note for note in result.notes)
        assert not any("intruder" in note for note in result.notes)  # a count, never the content
        assert "1 audit row(s) quarantined" in caplog.text and "intruder" not in caplog.text
    finally:
        engine.dispose()


def test_a_forged_next_place_with_a_junk_hash_is_quarantined_not_chained(db):
    write(db, 5)
    seq, digest = head(db)
    with as_app(db):
        db.execute(text(FORGED), {"seq": seq + 1, "prev": digest, "hash": JUNK})
        write(db, 2)
    point = sign_head(db, SIGNER)
    assert point.seq == 7
    size, root = signed_root(point)
    assert all(proven(db, s, size, root) for s in range(1, 8))
    result = verify_log(db, SIGNER.public_key, [])
    assert [f.kind for f in result.findings] == [] and result.quarantined == 1
    forged = db.scalars(select(AuditEvent).where(AuditEvent.actor_id == "intruder")).one()
    assert forged.seq is None and forged.hash is None and forged.quarantined


def test_placing_a_waiting_event_with_a_junk_hash_is_quarantined_and_far_ahead_is_refused(db):
    write(db, 5)
    seq, digest = head(db)
    with as_app(db):
        waiting = record(db, Actor("client", "intruder"), "aggregate.read", "open")
        with pytest.raises(DBAPIError, match="placed at the head"), db.begin_nested():  # a gap: refused
            db.execute(text("UPDATE audit_events SET seq = :s, prev_hash = :p, hash = :h WHERE id = :id"),
                       {"s": seq + 100, "p": digest, "h": JUNK, "id": waiting})  # fmt: skip
        with pytest.raises(DBAPIError, match="placed at the head"), db.begin_nested():  # a fork: refused
            db.execute(text("UPDATE audit_events SET seq = :s, prev_hash = :p, hash = :h WHERE id = :id"),
                       {"s": seq + 1, "p": JUNK, "h": JUNK, "id": waiting})  # fmt: skip
        # The next place, linked to the head, with a hash the sequencer would never compute: the column grant
        # lets the role do this once; it cannot be told from the sequencer by its privileges.
        db.execute(text("UPDATE audit_events SET seq = :s, prev_hash = :p, hash = :h WHERE id = :id"),
                   {"s": seq + 1, "p": digest, "h": JUNK, "id": waiting})  # fmt: skip
        write(db, 3)
    point = sign_head(db, SIGNER)
    assert point.seq == 9
    size, root = signed_root(point)
    assert all(proven(db, s, size, root) for s in range(1, 10))
    result = verify_log(db, SIGNER.public_key, [])
    assert result.findings == [] and result.quarantined == 1
    assert any("placed with a hash that is not the hash of their content" in note for note in result.notes)


def test_an_owner_edit_of_a_placed_event_is_still_named_edited(db):
    write(db, 6)
    db.execute(text("ALTER TABLE audit_events DISABLE TRIGGER USER"))
    db.execute(text("""UPDATE audit_events SET details = '{"n": 99}' WHERE seq = 4"""))
    db.execute(text("ALTER TABLE audit_events ENABLE TRIGGER USER"))
    db.expire_all()
    result = verify_log(db, SIGNER.public_key, [])
    assert [(f.kind, f.seq) for f in result.findings] == [("edited", 4)] and result.quarantined == 0


def test_the_sequencer_never_chains_a_quarantined_row(db):
    write(db, 2)
    with as_app(db):
        db.execute(text(FORGED), {"seq": 3, "prev": JUNK, "hash": JUNK})
    assert sequence(db) == 0  # it waits for no place: nothing to chain
    write(db, 1)
    assert head(db)[0] == 3 and db.scalar(select(AuditEvent.actor_id).where(AuditEvent.seq == 3)) == "team-a"


def test_a_quarantined_row_naming_a_participant_is_no_use_of_their_agent(db):
    person = uuid.uuid4()
    record(db, TEAM, "job.answer", "restricted", participant_id=person, details={"released": True})
    with as_app(db):  # the forged row names the person, claiming a place
        db.execute(text(FORGED.replace("details,", "details, participant_id,").replace("'{}',", "'{}', :who,")),
                   {"seq": 1, "prev": JUNK, "hash": JUNK, "who": person})  # fmt: skip
    sequence(db)
    uses = uses_of_agent(db, person, Actor("participant", "self"))
    assert [(u.action, u.outcome) for u in uses] == [("job.answer", "released")]
