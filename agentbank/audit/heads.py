"""Checking the Merkle tree against signed tree heads, and counting the witnesses who cosigned them.

A checkpoint carries its head twice: the chain head (``head_hash``, checked by ``verification``) and
the tree head in its note (origin, size, Merkle root). This module checks the second: the note must be
signed by the same trusted key as the checkpoint, state the checkpoint's size, and its root must be the
root of the tree rebuilt, leaf by leaf, from the log as stored. A witness's cosignature counts only
on such a head, and only when it verifies under a witness key the verifier was given: a cosignature
found in the database is as good as one found anywhere, since nobody but the witness can make one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.audit import merkle, notes
from agentbank.audit.checkpoints import SignedCheckpoint
from agentbank.audit.tree import TILE
from agentbank.audit.trust import TrustedKeys
from agentbank.db.models import AuditCheckpoint, AuditCosignature, AuditTreeNode


@dataclass(frozen=True)
class Head:
    """A tree head a trusted key signed, where it was found, and the witnesses who cosigned it."""

    head: notes.TreeHead
    where: str
    cosigners: frozenset[str]


@dataclass(frozen=True)
class BadHead:
    """A checkpoint, validly signed, whose tree head is not: its note was edited or is not the bank's."""

    seq: int
    where: str
    reason: str


def read_heads(
    points: Iterable[SignedCheckpoint], keys: TrustedKeys, where: str, witnesses: Sequence[notes.Verifier] = ()
) -> tuple[list[Head], list[BadHead]]:
    """The tree heads of checkpoints already known to be validly signed (``keys.verifies``); those
    without a note (signed before the tree) are passed over."""
    heads, bad = [], []
    for point in points:
        if point.note is None:
            continue
        key = keys.key_named(point.key_id)
        try:
            note = notes.Note.parse(point.note)
            head = notes.TreeHead.parse(note.text)
        except notes.NoteError as exc:
            bad.append(BadHead(point.seq, where, f"its note is not a checkpoint ({exc})"))
            continue
        if key is None or not note.signed_by(notes.Verifier(head.origin, notes.ED25519, key)):
            bad.append(BadHead(point.seq, where, "its tree head is not signed by the key that signed the checkpoint"))
        elif head.size != point.seq:
            bad.append(BadHead(point.seq, where, f"its tree head states {head.size} events, not {point.seq}"))
        else:
            cosigners = frozenset(w.name for w in witnesses if note.cosigned_at(w) is not None)
            heads.append(Head(head, where, cosigners))
    return heads, bad


class TreeWalk:
    """The tree rebuilt from the log as it streams by (O(log n) memory): roots at the wanted sizes, and
    the perfect subtrees the database should store, to compare with what it does store."""

    def __init__(self, sizes: Iterable[int]) -> None:
        self.sizes = set(sizes)
        self.range = merkle.CompactRange()
        self.roots: dict[int, bytes] = {}
        self.nodes: dict[tuple[int, int], bytes] = {}

    def add(self, leaf: bytes) -> None:
        """The next event's leaf hash (``agentbank.audit.entries.leaf``)."""
        for level, index, digest in self.range.append(leaf):
            if level >= TILE:
                self.nodes[(level, index)] = digest
        if self.range.size in self.sizes:
            self.roots[self.range.size] = self.range.root()

    def mismatches(self, heads: Iterable[Head]) -> list[Head]:
        """The heads whose root is not the root of the log's first ``size`` events (those beyond the log
        are left to the truncation check)."""
        return [h for h in heads if h.head.size <= self.range.size and self.roots.get(h.head.size) != h.head.root]


def with_cosignatures(session: Session, rows: Sequence[AuditCheckpoint]) -> list[SignedCheckpoint]:
    """The checkpoints of these rows, each note carrying the cosignatures witnesses returned for it."""
    lines: dict[int, str] = {}
    ids = [row.id for row in rows]
    for checkpoint_id, line in session.execute(
        select(AuditCosignature.checkpoint_id, AuditCosignature.line)
        .where(AuditCosignature.checkpoint_id.in_(ids))
        .order_by(AuditCosignature.id)
    ):
        lines[checkpoint_id] = lines.get(checkpoint_id, "") + line
    points = []
    for row in rows:
        try:
            points.append(SignedCheckpoint.of(row, lines.get(row.id, "")))
        except ValueError:  # a stored line that is no signature line: the checkpoint is served without them
            points.append(SignedCheckpoint.of(row))
    return points


def stored_points(session: Session) -> list[SignedCheckpoint]:
    """Every checkpoint row, in the order stored, with its cosignatures."""
    rows = session.scalars(select(AuditCheckpoint).order_by(AuditCheckpoint.id)).all()
    return [p for start in range(0, len(rows), 1000) for p in with_cosignatures(session, rows[start : start + 1000])]


def compare_nodes(session: Session, walk: TreeWalk) -> tuple[list[tuple[int, int]], int]:
    """The stored subtrees that differ from the rebuilt tree (level, index; sorted), and how many it lacks."""
    stored = {
        (level, index): digest
        for level, index, digest in session.execute(
            select(AuditTreeNode.level, AuditTreeNode.index, AuditTreeNode.hash).execution_options(yield_per=5000)
        )
    }
    differing = sorted(key for key, digest in stored.items() if key in walk.nodes and walk.nodes[key] != digest)
    return differing, len(walk.nodes.keys() - stored.keys())
