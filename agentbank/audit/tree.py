"""The audit log's Merkle tree in the database: built as events are chained, read for proofs.

Leaf ``i`` is the event at ``seq = i + 1``: ``SHA-256(0x00 || entry)``, where the entry is the event as
the participant's portal shows it with its chain hash (the receipt), or, for events written before leaves
had versions, the chain hash alone (``agentbank.audit.entries``). The tree so covers the chain's events in
the chain's order, and a use can be proven against a signed tree head with log2(n) hashes.

Perfect subtrees of ``2**TILE`` leaves and more are stored (``audit_tree_nodes``, written once, by the
sequencer under its lock); smaller ones are hashed from the events when a proof needs them. A proof thus
reads a few stored nodes and at most two runs of 256 events, whatever the log's length.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from sqlalchemy import func, select, tuple_
from sqlalchemy.orm import Session

from agentbank.audit import entries, merkle
from agentbank.core.errors import ConflictError, InvalidRequestError, NotFoundError
from agentbank.db.models import AuditEvent, AuditTreeNode

TILE = 8  # stored subtrees hold 2**8 = 256 leaves and up
T = TypeVar("T")


def leaves(session: Session, start: int, end: int) -> list[bytes]:
    """The leaf hashes of leaves [start, end), from the events; refuses a gap (a deleted event: only the
    owner can make one, since the database places events at the head alone)."""
    rows = session.scalars(
        select(AuditEvent).where(AuditEvent.seq > start, AuditEvent.seq <= end).order_by(AuditEvent.seq)
    ).all()
    if len(rows) != end - start or any(row.hash is None for row in rows):
        raise ConflictError(f"the audit log lacks events between {start + 1} and {end}: it cannot be proven")
    return [entries.leaf(row) for row in rows]


def extend(session: Session) -> int:
    """Store every perfect subtree of 256 leaves and up that the chained events complete; how many.

    Called by the sequencer under its lock, in its transaction, so nodes and events commit together.
    Stored nodes are never rewritten: the tree only grows.
    """
    head = session.scalar(select(func.max(AuditEvent.seq))) or 0
    built = session.scalar(select(func.max(AuditTreeNode.index)).where(AuditTreeNode.level == TILE))
    start, end = (built + 1) if built is not None else 0, head >> TILE
    added, level = 0, TILE
    fresh: dict[int, bytes] = {}
    fresh_start = start
    while start < end:
        if level == TILE:
            new = {i: _tile(session, i) for i in range(start, end)}
        else:
            below = level - 1
            if start * 2 < fresh_start:  # the left child was stored on an earlier round
                fresh[start * 2] = _stored(session, below, start * 2)
            new = {i: merkle.node_hash(fresh[2 * i], fresh[2 * i + 1]) for i in range(start, end)}
        session.add_all(AuditTreeNode(level=level, index=i, hash=h) for i, h in new.items())
        added += len(new)
        # The next level up: parents whose right child is new.
        fresh, fresh_start = new, start
        start, end, level = start // 2, end // 2, level + 1
    session.flush()
    return added


def _tile(session: Session, index: int) -> bytes:
    first = index << TILE
    return merkle.MemoryTree(leaves(session, first, first + (1 << TILE))).root()


def _stored(session: Session, level: int, index: int) -> bytes:
    found = session.scalar(
        select(AuditTreeNode.hash).where(AuditTreeNode.level == level, AuditTreeNode.index == index)
    )  # fmt: skip
    if found is None:
        raise ConflictError(f"the audit tree lacks its node {level}/{index}: it cannot be proven")
    return found


class _Recorder:
    """A stand-in that notes which perfect subtrees a proof needs (the proof's shape never depends on hashes)."""

    def __init__(self) -> None:
        self.wanted: set[tuple[int, int]] = set()

    def perfect(self, level: int, index: int) -> bytes:
        self.wanted.add((level, index))
        return bytes(32)


class StoredTree:
    """The tree as the database holds it, for proofs and roots at any size up to the chained head."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._nodes: dict[tuple[int, int], bytes] = {}

    def perfect(self, level: int, index: int) -> bytes:
        return self._nodes[(level, index)]

    def _load(self, wanted: Iterable[tuple[int, int]]) -> None:
        wanted = [w for w in wanted if w not in self._nodes]
        stored = [w for w in wanted if w[0] >= TILE]
        if stored:
            rows = self.session.execute(
                select(AuditTreeNode.level, AuditTreeNode.index, AuditTreeNode.hash)
                .where(tuple_(AuditTreeNode.level, AuditTreeNode.index).in_(stored))
            ).all()  # fmt: skip
            self._nodes.update({(level, index): digest for level, index, digest in rows})
            missing = [w for w in stored if w not in self._nodes]
            if missing:
                raise ConflictError(f"the audit tree lacks {len(missing)} node(s): it cannot be proven yet")
        for level, index in (w for w in wanted if w[0] < TILE):
            first = index << level
            self._nodes[(level, index)] = merkle.MemoryTree(leaves(self.session, first, first + (1 << level))).root()

    def _prepared(self, compute: Callable[[merkle.Nodes], T]) -> T:
        """Run ``compute`` once to learn which nodes it reads, load them in one go, then run it for real."""
        recorder = _Recorder()
        compute(recorder)
        self._load(sorted(recorder.wanted))
        return compute(self)

    def root(self, size: int) -> bytes:
        """The root hash of the first ``size`` leaves."""
        return self._prepared(lambda nodes: merkle.range_hash(nodes, 0, size))

    def inclusion(self, index: int, size: int) -> list[bytes]:
        """The inclusion proof of leaf ``index`` in the tree of ``size``."""
        return self._prepared(lambda nodes: merkle.inclusion_proof(nodes, index, size))

    def consistency(self, first: int, second: int) -> list[bytes]:
        """The consistency proof from the tree of ``first`` leaves to that of ``second``."""
        return self._prepared(lambda nodes: merkle.consistency_proof(nodes, first, second))


def inclusion(session: Session, seq: int, size: int) -> list[bytes]:
    """The proof that event ``seq`` is leaf ``seq - 1`` of the tree of ``size`` events (the API's question)."""
    _within(session, size)
    if not 1 <= seq <= size:
        raise InvalidRequestError(f"event {seq} is not in a tree of {size} events")
    return StoredTree(session).inclusion(seq - 1, size)


def consistency(session: Session, first: int, second: int) -> list[bytes]:
    """The proof that the tree of ``first`` events is a prefix of the tree of ``second``."""
    _within(session, second)
    if not 0 <= first <= second:
        raise InvalidRequestError(f"no tree of {first} events is a prefix of one of {second}")
    return StoredTree(session).consistency(first, second)


def _within(session: Session, size: int) -> None:
    chained = session.scalar(select(func.max(AuditEvent.seq))) or 0
    if size > chained:
        raise NotFoundError(f"the audit log has {chained} chained events, not {size}")
