"""The audit log's Merkle tree as the database holds it: grown by the sequencer, signed in checkpoints,
read for proofs, and checked by verification against tampering the chain check does not name."""

from __future__ import annotations

import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import sessionmaker

from agentbank.audit import notes, tree
from agentbank.audit.checkpoints import CheckpointFile, publish_checkpoint
from agentbank.audit.entries import leaf
from agentbank.audit.log import Actor, record, sequence
from agentbank.audit.merkle import MemoryTree, verify_consistency, verify_inclusion
from agentbank.audit.signing_keys import AuditSigner
from agentbank.audit.verification import verify_log
from agentbank.core.errors import ConflictError
from agentbank.db.models import AuditEvent, AuditTreeNode

SIGNER = AuditSigner.from_secret("audit-tree-test-secret-" * 3, origin="bank.example/audit")
TEAM = Actor("client", "team-a")


def write(db, n: int) -> None:
    for i in range(n):
        record(db, TEAM, "aggregate.read", "open", details={"n": i})
    db.flush()
    sequence(db, limit=100_000)


def leaves(db) -> list[bytes]:
    """The leaf hashes of the placed events, in order (each commits to the event as a participant reads it)."""
    return [leaf(e) for e in db.scalars(select(AuditEvent).where(AuditEvent.seq.is_not(None)).order_by(AuditEvent.seq))]


def owner(db, sql: str, **params) -> None:
    db.execute(text("ALTER TABLE audit_tree_nodes DISABLE TRIGGER USER"))
    db.execute(text(sql), params)
    db.execute(text("ALTER TABLE audit_tree_nodes ENABLE TRIGGER USER"))


def test_the_sequencer_stores_the_subtrees_of_256_leaves_and_up_as_the_chain_grows(db):
    write(db, 300)
    stored = {(n.level, n.index): n.hash for n in db.scalars(select(AuditTreeNode))}
    memory = MemoryTree(leaves(db))
    assert stored == {(8, 0): memory.perfect(8, 0)}  # one tile; 44 leaves wait for the next
    write(db, 300)  # 600: the second tile, and its parent over both
    stored = {(n.level, n.index): n.hash for n in db.scalars(select(AuditTreeNode))}
    memory = MemoryTree(leaves(db))
    assert stored == {(8, 0): memory.perfect(8, 0), (8, 1): memory.perfect(8, 1), (9, 0): memory.perfect(9, 0)}


def test_proofs_read_from_the_database_verify_against_the_root_of_the_chain(db):
    write(db, 777)
    memory = MemoryTree(leaves(db))
    stored = tree.StoredTree(db)
    for size in (1, 2, 255, 256, 257, 512, 600, 777):
        assert stored.root(size) == memory.root(size)
    hashes = leaves(db)
    for index in (0, 1, 255, 256, 511, 512, 700, 776):
        proof = stored.inclusion(index, 777)
        assert len(proof) <= 10  # ceil(log2(777)) at most: what a participant's page fetches
        assert verify_inclusion(hashes[index], index, 777, proof, memory.root())
    for first in (1, 100, 256, 500, 777):
        proof = stored.consistency(first, 777)
        assert verify_consistency(first, 777, memory.root(first), memory.root(), proof)
    with pytest.raises(ValueError, match="not in a tree"):
        stored.inclusion(777, 777)


def test_a_checkpoint_signs_the_tree_head_as_a_c2sp_note(db, tmp_path):
    write(db, 5)
    sessions = sessionmaker(bind=db.connection(), join_transaction_mode="create_savepoint")
    point = publish_checkpoint(sessions, SIGNER, CheckpointFile(tmp_path / "checkpoints.jsonl"))
    assert point is not None and point.note is not None
    note = notes.Note.parse(point.note)
    head = notes.TreeHead.parse(note.text)
    assert head == notes.TreeHead("bank.example/audit", 5, MemoryTree(leaves(db)).root())
    assert note.signed_by(SIGNER.verifier)
    assert note.signatures[0][0] == "bank.example/audit"  # the key name is the origin, as the spec advises
    assert point.tree_head() == head


def test_a_stored_node_edited_is_named_and_its_proofs_fail(db, tmp_path):
    write(db, 520)
    sessions = sessionmaker(bind=db.connection(), join_transaction_mode="create_savepoint")
    outside = CheckpointFile(tmp_path / "checkpoints.jsonl")
    point = publish_checkpoint(sessions, SIGNER, outside)
    head = point.tree_head()
    assert verify_log(db, SIGNER.public_key, outside.read()[0]).ok
    owner(db, "UPDATE audit_tree_nodes SET hash = :h WHERE level = 8 AND idx = 1", h=bytes(32))
    db.expire_all()
    result = verify_log(db, SIGNER.public_key, outside.read()[0])
    assert [(f.kind, f.seq) for f in result.findings] == [("tree_edited", 257)]
    hashes = leaves(db)
    proof = tree.StoredTree(db).inclusion(5, 520)  # its path passes the edited node
    assert not verify_inclusion(hashes[5], 5, 520, proof, head.root)


def test_a_missing_event_refuses_a_proof_rather_than_proving_a_different_log(db):
    write(db, 10)
    db.execute(text("ALTER TABLE audit_events DISABLE TRIGGER USER"))
    db.execute(text("DELETE FROM audit_events WHERE seq = 4"))
    db.execute(text("ALTER TABLE audit_events ENABLE TRIGGER USER"))
    with pytest.raises(ConflictError, match="lacks events"):
        tree.StoredTree(db).inclusion(2, 10)


def test_a_gap_under_the_tree_never_stops_the_chain_but_stops_signing(db, tmp_path):
    write(db, 10)
    db.execute(text("ALTER TABLE audit_events DISABLE TRIGGER USER"))
    db.execute(text("DELETE FROM audit_events WHERE seq = 4"))
    db.execute(text("ALTER TABLE audit_events ENABLE TRIGGER USER"))
    write(db, 300)  # the first tile would need event 4: the tree cannot grow, the chain still does
    assert db.scalar(select(AuditEvent.seq).order_by(AuditEvent.seq.desc()).limit(1)) == 310
    assert db.scalar(select(AuditTreeNode.hash).limit(1)) is None
    sessions = sessionmaker(bind=db.connection(), join_transaction_mode="create_savepoint")
    with pytest.raises(ConflictError, match="lacks events"):
        publish_checkpoint(sessions, SIGNER, CheckpointFile(tmp_path / "checkpoints.jsonl"))


def test_the_application_role_cannot_change_a_stored_node(db):
    write(db, 256)
    with pytest.raises(Exception, match=r"append-only|permission denied"), db.begin_nested():
        db.execute(text("SET LOCAL ROLE agentbank_app"))
        db.execute(text("UPDATE audit_tree_nodes SET hash = :h"), {"h": bytes(32)})
