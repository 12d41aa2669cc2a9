"""Post-stratification weights for a release's agents, raked to population margins.

Raking (iterative proportional fitting) is the GSS's own method; it is done by ``svy``, a maintained
survey library, not by hand. Starting from equal weights, every agent of one cell (the same category
on every raked breakdown) ends with the same weight, so a release keeps one weight per cell rather
than per agent. Agents whose category is unknown keep their own share of each margin, and a category
nobody in the release falls into cannot be reached: it is left out and said so.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import svy

from agentbank.publication.breakdowns import UNKNOWN
from agentbank.publication.weighting.targets import Targets

Cell = tuple[str, ...]
# |achieved share - target share| is below this on every margin category (0.1 point needs 1e-3).
TOLERANCE = 1e-6
MAX_ITERATIONS = 1000


class RakingError(Exception):
    """The margins cannot be met by these agents."""


@dataclass(frozen=True)
class Weights:
    """One weight per cell of the raked breakdowns (mean weight one over the release's agents)."""

    source: str
    dimensions: tuple[str, ...]
    by_cell: dict[Cell, float]
    notes: list[str] = field(default_factory=list)

    def of(self, cell: Cell) -> float:
        """The weight of an agent in ``cell`` (1 for a cell the weights have not seen)."""
        return self.by_cell.get(cell, 1.0)

    def to_json(self) -> dict[str, object]:
        """As stored with the release."""
        return {"source": self.source, "dimensions": list(self.dimensions), "notes": self.notes,
                "cells": [[list(cell), weight] for cell, weight in sorted(self.by_cell.items())]}  # fmt: skip

    @classmethod
    def from_json(cls, stored: dict[str, Any]) -> Weights:
        """Read back what ``to_json`` stored."""
        cells = {tuple(cell): float(weight) for cell, weight in stored["cells"]}
        return cls(str(stored["source"]), tuple(stored["dimensions"]), cells, list(stored.get("notes") or []))


def rake(
    members: Sequence[Cell], dimensions: Sequence[str], targets: Targets, counts: Sequence[float] | None = None
) -> Weights:
    """Weights for agents in ``members`` (each one's category on ``dimensions``) meeting ``targets``.

    With ``counts``, each entry of ``members`` is a cell standing for that many agents (a fitted, possibly
    fractional, count), and its weight is an agent's of that cell. Margins of ``targets`` on breakdowns
    outside ``dimensions`` are ignored; raises ``RakingError`` when no weights meet the margins.
    """
    dims = tuple(dimensions)
    sizes = [1.0] * len(members) if counts is None else [float(c) for c in counts]
    if not members or sum(sizes) <= 0:
        raise RakingError("a release with no agents has nothing to weight")
    frame = pl.DataFrame({d: [m[i] for m in members] for i, d in enumerate(dims)} | {"w": sizes})
    whole = sum(sizes)
    shares: dict[str, dict[str | int | float | bool, int | float]] = {}
    notes: list[str] = []
    for key, target in targets.margins.items():
        if key not in dims:
            continue
        present: dict[str, float] = defaultdict(float)
        for member, size in zip(members, sizes, strict=True):
            present[member[dims.index(key)]] += size
        unknown = present.get(UNKNOWN, 0) / whole
        reachable = {c: s for c, s in target.items() if present.get(c) and s > 0}
        missing = sorted(c for c, s in target.items() if s > 0 and not present.get(c))
        if missing:
            notes.append(f"{key}: no agent is {', '.join(missing)}; the other categories share its target")
        if not reachable:
            notes.append(f"{key}: not raked (no agent's category is known)")
            continue
        total = sum(reachable.values())
        shares[key] = {c: s / total * (1 - unknown) for c, s in reachable.items()}
        if unknown:
            shares[key][UNKNOWN] = unknown
            notes.append(f"{key}: {present[UNKNOWN]:.0f} agents of unknown category keep their share")
        unseen = set(present) - set(shares[key])
        if unseen:  # categories with agents but no target: nothing can be raked in this margin
            raise RakingError(f"{key}: agents fall in {sorted(unseen)}, which the targets give no share")
    if not shares:
        raise RakingError("no margin of the targets can be raked on this release")
    sample = svy.Sample(data=frame, design=svy.Design(wgt="w"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raked = sample.weighting.rake(shares=shares, tol=TOLERANCE, max_iter=MAX_ITERATIONS)
    except Exception as exc:  # svy raises its own error types; any of them means the margins are not met
        raise RakingError(f"the margins cannot be met by these agents ({type(exc).__name__})") from None
    raked_sizes = [float(w) for w in raked.data.lazy().select("rk_wgt").collect().to_series()]
    mean = sum(raked_sizes) / whole  # so that the agents' mean weight is one
    by_cell: dict[Cell, float] = {}
    for member, size, raked_size in zip(members, sizes, raked_sizes, strict=True):
        if size > 0:
            by_cell.setdefault(tuple(member), raked_size / size / mean)
    return Weights(targets.source, dims, by_cell, notes)
