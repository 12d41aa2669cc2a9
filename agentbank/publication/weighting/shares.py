"""Weighted shares of a table's cells, with design effects and 95% intervals.

Every figure is computed per group of the table over the agents who answered the item: the weighted
share of a code is its agents' weight over the group's; the design effect is Kish's
n·Σw²/(Σw)² (what unequal weights cost in precision), and intervals are Wilson's, on the group's n
unweighted and on its effective n = n / deff weighted. Suppression is decided on the unweighted
counts elsewhere; here nothing is hidden or shown, only computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Group = tuple[str, ...]
Z95 = 1.959963984540054


@dataclass(frozen=True)
class GroupWeights:
    """A group's agents: how many, and the sum of their weights and of their squares."""

    n: int
    total: float
    squares: float

    @property
    def deff(self) -> float:
        """Kish's design effect of the group's weights (1 when all are equal)."""
        return self.n * self.squares / self.total**2 if self.total else math.nan

    @property
    def effective_n(self) -> float:
        return self.n / self.deff if self.total else 0.0


@dataclass(frozen=True)
class WeightedTable:
    """Weighted totals of a table: by (group, code) and by group."""

    cells: dict[tuple[Group, int], float]
    groups: dict[Group, GroupWeights]

    def share(self, group: Group, code: int) -> float | None:
        g = self.groups.get(group)
        return self.cells.get((group, code), 0.0) / g.total if g and g.total else None

    def to_json(self) -> dict[str, list[list[Any]]]:
        """As stored beside the protected table (never shown: it holds the hidden cells' totals too)."""
        return {"cells": [[list(g), code, w] for (g, code), w in self.cells.items()],
                "groups": [[list(g), f.n, f.total, f.squares] for g, f in self.groups.items()]}  # fmt: skip

    @classmethod
    def from_json(cls, stored: dict[str, list[list[Any]]]) -> WeightedTable:
        """Read back what ``to_json`` stored."""
        cells = {(tuple(g), code): w for g, code, w in stored["cells"]}
        return cls(cells, {tuple(g): GroupWeights(n, total, squares) for g, n, total, squares in stored["groups"]})


def weigh(
    counts: Mapping[tuple[Group, int], int], group_of: Callable[[Group], Group], weight_of: Callable[[Group], float]
) -> WeightedTable:
    """Weighted totals of a table from a release's counts by (profile, code).

    ``group_of`` maps a profile to its group in the table, ``weight_of`` to its agents' weight.
    """
    cells: dict[tuple[Group, int], float] = {}
    sums: dict[Group, list[float]] = {}
    for (profile, code), n in counts.items():
        if n <= 0:
            continue
        group, w = group_of(profile), weight_of(profile)
        cells[(group, code)] = cells.get((group, code), 0.0) + n * w
        acc = sums.setdefault(group, [0, 0.0, 0.0])
        acc[0] += n
        acc[1] += n * w
        acc[2] += n * w * w
    return WeightedTable(cells, {g: GroupWeights(int(a[0]), a[1], a[2]) for g, a in sums.items()})


def wilson(share: float, n: float) -> tuple[float, float] | None:
    """Wilson's 95% interval for a share observed over ``n`` (possibly effective, fractional) agents."""
    if n <= 0:
        return None
    z2 = Z95 * Z95
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)
