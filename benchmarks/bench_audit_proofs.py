"""Merkle proofs of the audit log: their sizes and times at 10^3, 10^5 and 10^6 events.

The tree is built in memory from synthetic leaves (random 32-byte chain hashes), laid out as the
database lays it out (``agentbank.audit.tree``): subtrees of 256 leaves and up kept, smaller ones
hashed from the leaves when a proof needs them. So a proof here does the hashing a served proof does
(at most two runs of 256 leaves and log2(n) kept nodes) without the database reads, which the API's
own figures carry. For each size: the time to grow the tree (what the sequencer adds per event), an
inclusion proof's length and the time to make and to check one, and the same for a consistency proof
from a random earlier size (what a witness checks).

Run: python -m benchmarks.bench_audit_proofs [--sizes 1000,100000,1000000] [--samples 200] [--quick]
(--quick: 1000 events, 20 samples, nothing saved; the full run keeps a million leaf hashes in memory)
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from typing import Any

from agentbank.audit import merkle
from agentbank.audit.tree import TILE
from benchmarks.common import save


class TiledTree:
    """Leaf hashes and the kept subtrees (level >= TILE), as the database holds them."""

    def __init__(self, leaves: list[bytes]) -> None:
        self.leaves = leaves
        self.kept: dict[tuple[int, int], bytes] = {}
        stream = merkle.CompactRange()
        for leaf in leaves:
            for level, index, digest in stream.append(leaf):
                if level >= TILE:
                    self.kept[(level, index)] = digest
        self.root = stream.root()
        self.hashed = 0  # leaves hashed on demand: the served proof's extra work

    def perfect(self, level: int, index: int) -> bytes:
        if level >= TILE:
            return self.kept[(level, index)]
        first = index << level
        self.hashed += 1 << level
        return merkle.MemoryTree(self.leaves[first : first + (1 << level)]).root()


def timed(function: Any, *args: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def measure(size: int, samples: int, rng: random.Random) -> dict[str, Any]:
    leaves = [merkle.leaf_hash(rng.randbytes(32)) for _ in range(size)]
    tree, grow_s = timed(TiledTree, leaves)
    inclusion = {"hashes": [], "make_ms": [], "check_ms": [], "leaves_hashed": []}
    for index in (rng.randrange(size) for _ in range(samples)):
        tree.hashed = 0
        proof, made = timed(merkle.inclusion_proof, tree, index, size)
        ok, checked = timed(merkle.verify_inclusion, leaves[index], index, size, proof, tree.root)
        assert ok
        inclusion["hashes"].append(len(proof))
        inclusion["make_ms"].append(made * 1000)
        inclusion["check_ms"].append(checked * 1000)
        inclusion["leaves_hashed"].append(tree.hashed)
    consistency = {"hashes": [], "make_ms": [], "check_ms": []}
    for first in (rng.randrange(1, size) for _ in range(samples)):
        proof, made = timed(merkle.consistency_proof, tree, first, size)
        first_root = merkle.range_hash(tree, 0, first)
        ok, checked = timed(merkle.verify_consistency, first, size, first_root, tree.root, proof)
        assert ok
        consistency["hashes"].append(len(proof))
        consistency["make_ms"].append(made * 1000)
        consistency["check_ms"].append(checked * 1000)

    def summary(values: list[float]) -> dict[str, float]:
        ordered = sorted(values)
        p95 = ordered[int(0.95 * (len(ordered) - 1))]
        return {"median": round(statistics.median(ordered), 3), "p95": round(p95, 3), "max": round(ordered[-1], 3)}

    return {
        "events": size,
        "grow_s": round(grow_s, 3),
        "grow_us_per_event": round(grow_s / size * 1e6, 2),
        "kept_nodes": len(tree.kept),
        "inclusion": {"hashes": summary(inclusion["hashes"]), "bytes_max": 32 * max(inclusion["hashes"]),
                      "make_ms": summary(inclusion["make_ms"]), "check_ms": summary(inclusion["check_ms"]),
                      "leaves_hashed": summary(inclusion["leaves_hashed"])},
        "consistency": {"hashes": summary(consistency["hashes"]), "bytes_max": 32 * max(consistency["hashes"]),
                        "make_ms": summary(consistency["make_ms"]), "check_ms": summary(consistency["check_ms"])},
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,100000,1000000", help="event counts, comma-separated")
    parser.add_argument("--samples", type=int, default=200, help="proofs made and checked per size")
    parser.add_argument("--quick", action="store_true", help="1000 events, 20 samples, nothing saved")
    parser.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "big"))
    args = parser.parse_args()
    sizes = [1000] if args.quick else [int(s) for s in args.sizes.split(",")]
    samples = 20 if args.quick else args.samples
    rng = random.Random(args.seed)
    figures = {"seed": args.seed, "samples": samples, "tile_height": TILE, "sizes": []}
    for size in sizes:
        result = measure(size, samples, rng)
        figures["sizes"].append(result)
        inc, con = result["inclusion"], result["consistency"]
        print(
            f"{size:>9} events: grown in {result['grow_s']:.2f} s ({result['grow_us_per_event']} µs/event); "
            f"inclusion {inc['hashes']['max']:.0f} hashes ({inc['bytes_max']} B), made {inc['make_ms']['median']} ms, "
            f"checked {inc['check_ms']['median']} ms; consistency {con['hashes']['max']:.0f} hashes, "
            f"made {con['make_ms']['median']} ms, checked {con['check_ms']['median']} ms"
        )
    if not args.quick:
        print(f"saved {save('audit-proofs', figures)}")


if __name__ == "__main__":
    main()
