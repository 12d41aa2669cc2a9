"""The audit log's tiles outside the database (C2SP tlog-tiles): the layout, the hashes against the tree's
own, appends in any sizes, and no file ever rewritten."""

from __future__ import annotations

import hashlib
import random

import pytest

from agentbank.audit import merkle
from agentbank.audit.tiles import WIDTH, TileLog, TileLogError, index_path, tile_path


def entries(n: int, salt: bytes = b"") -> list[bytes]:
    return [hashlib.sha256(salt + i.to_bytes(8, "big")).digest() for i in range(n)]


def chained(leaves: list[bytes]) -> list[bytes]:
    return [hashlib.sha256(b"chain" + e).digest() for e in leaves]


def test_tile_paths_follow_the_spec():
    assert index_path(0) == "000" and index_path(999) == "999" and index_path(1000) == "x001/000"
    assert index_path(1234067) == "x001/x234/067"
    assert tile_path(0, 1234067) == "tile/0/x001/x234/067"
    assert tile_path("entries", 3, 17) == "tile/entries/003.p/17"


def test_appends_of_any_size_make_the_trees_own_hashes(tmp_path):
    leaves, tiles = entries(3 * WIDTH * WIDTH // 4 + 7), TileLog(tmp_path)
    at, rng = tiles.append(0, leaves[:1], chained(leaves[:1])), random.Random(7)
    while at < len(leaves):  # batches as a sequencer makes them, some across tile boundaries
        step = rng.choice([1, 3, 255, 256, 700, 20_000])
        assert tiles.append(at, leaves[at : at + step], chained(leaves[at : at + step])) == min(at + step, len(leaves))
        at = min(at + step, len(leaves))
    tree = merkle.MemoryTree(merkle.leaf_hash(e) for e in leaves)
    assert TileLog(tmp_path).size() == len(leaves)
    assert tiles.chain(250, 600) == chained(leaves[250:600])
    assert tiles.entries(0, len(leaves)) == leaves and tiles.entries(255, 258) == leaves[255:258]
    assert tiles.hashes(0, 2, WIDTH) == [merkle.leaf_hash(e) for e in leaves[2 * WIDTH : 3 * WIDTH]]
    level_one = tiles.hashes(1, 0, len(leaves) // WIDTH)  # a level-1 hash: the root of 256 leaves
    assert level_one == [tree.perfect(8, i) for i in range(len(leaves) // WIDTH)]
    assert tiles.root() == tree.root() and tiles.root(1000) == tree.root(1000)
    # Partial tiles stay as they were written: a reader that fetched one can still fetch it.
    assert (tmp_path / tile_path(0, 0, 1)).read_bytes() == merkle.leaf_hash(leaves[0])


def test_nothing_written_is_rewritten(tmp_path):
    tiles, leaves = TileLog(tmp_path), entries(300)
    tiles.append(0, leaves, chained(leaves))
    assert tiles.append(290, leaves[290:], chained(leaves[290:])) == 300  # the same leaves again: nothing to do
    with pytest.raises(TileLogError, match="differ"):
        tiles.append(290, entries(10, b"other"), entries(10))
    with pytest.raises(TileLogError, match="cannot follow"):
        tiles.append(301, entries(1), entries(1))
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    tiles.append(300, entries(5, b"more"), entries(5))
    assert all(p.read_bytes() == data for p, data in before.items())
