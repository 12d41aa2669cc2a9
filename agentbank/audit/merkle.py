"""RFC 6962 Merkle tree hashing, proofs and their verification (the arithmetic alone, no storage).

The hashing is RFC 6962 section 2.1 (RFC 9162 section 2.1.1): a leaf is ``SHA-256(0x00 || entry)``,
an inner node ``SHA-256(0x01 || left || right)``, the empty tree ``SHA-256("")``. Proofs follow the
RFC's recursions (PATH and SUBPROOF); they are written against ``Nodes``, a source of *perfect*
subtree hashes (2**level leaves starting at index * 2**level), because every node the RFC's recursion
visits is either perfect or the right edge of the tree, which is folded from at most log2(n) perfect
ones. A store that keeps perfect subtrees can so serve any proof in O(log n) reads.

Verification is RFC 9162 sections 2.1.3.2 and 2.1.4.2, written apart from the generation on purpose:
a verifier that replays the generator would share its mistakes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Protocol

EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(entry: bytes) -> bytes:
    """The hash of one log entry."""
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """The hash of an inner node over its two children."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def split(size: int) -> int:
    """The largest power of two smaller than ``size`` (>= 2): where RFC 6962 divides a tree."""
    return 1 << ((size - 1).bit_length() - 1)


class Nodes(Protocol):
    """Hashes of perfect subtrees: ``perfect(level, index)`` covers leaves [index << level, (index + 1) << level)."""

    def perfect(self, level: int, index: int) -> bytes: ...


def range_hash(nodes: Nodes, start: int, end: int) -> bytes:
    """The hash of the subtree over leaves [start, end), where ``start`` is a multiple of the power of two
    at least ``end - start`` (true of every subtree RFC 6962 names): its perfect parts, folded from the right."""
    parts = []
    while start < end:
        level = (end - start).bit_length() - 1
        parts.append(nodes.perfect(level, start >> level))
        start += 1 << level
    if not parts:
        return EMPTY_ROOT
    result = parts.pop()
    while parts:
        result = node_hash(parts.pop(), result)
    return result


def inclusion_proof(nodes: Nodes, index: int, size: int) -> list[bytes]:
    """The audit path of leaf ``index`` in the tree of ``size`` leaves, leaf side first (RFC 6962 PATH)."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size}")
    path: list[bytes] = []
    start, end = 0, size
    while end - start > 1:  # walk down from the root; siblings are collected root side first
        k = split(end - start)
        if index < start + k:
            path.append(range_hash(nodes, start + k, end))
            end = start + k
        else:
            path.append(range_hash(nodes, start, start + k))
            start += k
    return path[::-1]


def consistency_proof(nodes: Nodes, first: int, second: int) -> list[bytes]:
    """The proof that the tree of ``first`` leaves is a prefix of the one of ``second`` (RFC 6962 PROOF)."""
    if not 0 <= first <= second:
        raise ValueError(f"no consistency proof from {first} to {second}")
    if first in (0, second):
        return []
    proof: list[bytes] = []
    start, end, whole = 0, second, True  # SUBPROOF(m, D[start:end], whole), unrolled
    m = first
    while True:
        if m == end - start:
            if not whole:
                proof.append(range_hash(nodes, start, end))
            break
        k = split(end - start)
        if m <= k:
            proof.append(range_hash(nodes, start + k, end))
            end = start + k
        else:
            proof.append(range_hash(nodes, start, start + k))
            start, m, whole = start + k, m - k, False
    return proof[::-1]


def verify_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes) -> bool:
    """Whether ``proof`` shows the leaf hash ``leaf`` at ``index`` in the tree of ``size`` with ``root``."""
    if not 0 <= index < size or any(len(p) != 32 for p in proof):
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]) -> bool:
    """Whether ``proof`` shows the tree (first, first_root) is a prefix of (second, second_root)."""
    if not 0 <= first <= second or any(len(p) != 32 for p in proof):
        return False
    if first == second:
        return not proof and first_root == second_root
    if first == 0:
        return not proof
    path = list(proof)
    if first & (first - 1) == 0:  # a power of two: the old root is itself a node of the new tree
        path.insert(0, first_root)
    if not path:
        return False
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == first_root and sr == second_root


class MemoryTree:
    """A tree held in memory from its leaf hashes (tests, benchmarks, small logs): every level kept."""

    def __init__(self, leaves: Iterable[bytes] = ()) -> None:
        self.levels: list[list[bytes]] = [[]]
        for leaf in leaves:
            self.append(leaf)

    @property
    def size(self) -> int:
        return len(self.levels[0])

    def append(self, leaf: bytes) -> None:
        """Add one leaf hash, completing the perfect subtrees it closes."""
        self.levels[0].append(leaf)
        level = 0
        while len(self.levels[level]) % 2 == 0:
            row = self.levels[level]
            if level + 1 == len(self.levels):
                self.levels.append([])
            self.levels[level + 1].append(node_hash(row[-2], row[-1]))
            level += 1

    def perfect(self, level: int, index: int) -> bytes:
        return self.levels[level][index]

    def root(self, size: int | None = None) -> bytes:
        """The root of the first ``size`` leaves (all of them by default)."""
        return range_hash(self, 0, self.size if size is None else size)


class CompactRange:
    """The perfect subtrees covering leaves [0, size): enough to hash the root as leaves stream by, in
    O(log n) memory (``audit verify`` walks a log of any length with it)."""

    def __init__(self) -> None:
        self.size = 0
        self._stack: list[bytes] = []  # perfect subtree roots, largest (leftmost) first

    def append(self, leaf: bytes) -> list[tuple[int, int, bytes]]:
        """Add a leaf hash; returns the perfect subtrees it completed as (level, index, hash), leaf first."""
        completed = [(0, self.size, leaf)]
        node, level, count = leaf, 0, self.size
        while count & 1:
            node = node_hash(self._stack.pop(), node)
            level, count = level + 1, count >> 1
            completed.append((level, count, node))
        self._stack.append(node)
        self.size += 1
        return completed

    def root(self) -> bytes:
        """The root of the tree of every leaf so far."""
        if not self._stack:
            return EMPTY_ROOT
        result = self._stack[-1]
        for node in reversed(self._stack[:-1]):
            result = node_hash(node, result)
        return result
