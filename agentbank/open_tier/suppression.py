"""Statistical disclosure control for the open tier: small cells suppressed, complements chosen so
that no suppressed cell can be recovered from what is released, in this table or the tables linked
to it (its one-way margins and the overall distribution).

A table is a set of base cells (one per combination of breakdown categories and answer code) and
statistics, each the sum of some base cells. Primary suppression hides statistics with 1 to k−1
agents. Then, until nothing is determined, every suppressed statistic is bounded by linear
programming over what an attacker knows — the released statistics and that counts are not negative —
and where a statistic's bounds admit a single integer, the smallest released statistic on a line
with it is suppressed too. Zeros can be complements: were they never hidden, an attacker would know
every hidden statistic is at least 1, which pins small tables (found by the property test).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linprog

DEFAULT_K = 10


@dataclass
class Stat:
    """A released number: the sum of some base cells."""

    key: tuple
    cells: tuple[int, ...]
    value: int
    suppressed: bool = False
    # Statistics of linked tables constrain the attacker but are released elsewhere, not here.
    linked: bool = False


@dataclass
class Table:
    """Base cells and the statistics over them."""

    counts: Sequence[int]
    stats: list[Stat] = field(default_factory=list)

    def add(self, key: tuple, cells: Sequence[int], *, linked: bool = False, suppressed: bool = False) -> Stat:
        """Add a statistic over ``cells``."""
        stat = Stat(key, tuple(cells), int(sum(self.counts[c] for c in cells)), suppressed, linked)
        self.stats.append(stat)
        return stat


def suppress(table: Table, k: int = DEFAULT_K, protect: Sequence[Stat] = ()) -> Table:
    """Apply primary and complementary suppression to the table's own (non-linked) statistics.

    ``protect`` are statistics to hide and keep undetermined whatever their size (a zero that, were it
    known, would tell a group's answer). Complements that end up determined anyway (a zero in a
    group known to be empty) protect nothing and reveal nothing new, so they are released again.
    """
    primary = [s for s in table.stats if not s.linked and 0 < s.value < k]
    primary += [s for s in protect if s not in primary]
    for stat in primary:
        stat.suppressed = True
    # Suppressing more only widens what an attacker can infer, so a statistic found undetermined
    # stays so: each protected statistic is checked until it is safe, once.
    for stat in primary:
        while determined(table, stat):
            if not _add_complement(table, stat):
                break
    for stat in table.stats:
        if stat.suppressed and not stat.linked and stat not in primary and determined(table, stat):
            stat.suppressed = False
    # A zero that could not be kept undetermined is known anyway; shown, it says so plainly (and callers
    # that reason about released zeros see it).
    for stat in primary:
        if stat.value == 0 and determined(table, stat):
            stat.suppressed = False
    return table


def _add_complement(table: Table, target: Stat) -> bool:
    """Suppress the smallest released statistic on a line (a sum) with ``target``.

    Interior cells are preferred to margins, so released margins stay as informative as possible.
    """
    mine = set(target.cells)
    lines = [set(s.cells) for s in table.stats if mine <= set(s.cells) and s is not target]
    candidates = [
        s for s in table.stats
        if not s.suppressed and not s.linked and any(set(s.cells) <= line for line in lines)
    ]  # fmt: skip
    if not candidates:
        # No partner on a shared line: hide the smallest released statistic of the table.
        candidates = [s for s in table.stats if not s.suppressed and not s.linked]
    if not candidates:
        return False
    if target.value == 0:
        # Beside a hidden zero, another hidden zero still sums to zero: only a count can hide it.
        candidates = [s for s in candidates if s.value > 0] or candidates
    min(candidates, key=lambda s: (len(s.cells), s.value)).suppressed = True
    return True


def bounds(table: Table, stat: Stat) -> tuple[float, float]:
    """The least and greatest value of ``stat`` consistent with everything released."""
    n = len(table.counts)
    constraints: dict[str, np.ndarray] = {}
    known = [s for s in table.stats if not s.suppressed]
    if known:
        constraints["A_eq"] = _rows(known, n)
        constraints["b_eq"] = np.array([s.value for s in known], dtype=float)
    objective = np.zeros(n)
    objective[list(stat.cells)] = 1
    low = linprog(objective, bounds=(0, None), method="highs", **constraints)
    high = linprog(-objective, bounds=(0, None), method="highs", **constraints)
    upper = math.inf if high.status == 3 else -high.fun  # status 3: unbounded
    return float(low.fun), float(upper)


def _rows(stats: list[Stat], n: int) -> np.ndarray:
    matrix = np.zeros((len(stats), n))
    for row, s in enumerate(stats):
        matrix[row, list(s.cells)] = 1
    return matrix


def determined(table: Table, stat: Stat) -> bool:
    """Whether the released statistics admit a single integer value for ``stat``."""
    low, high = bounds(table, stat)
    return math.isfinite(high) and math.floor(high + 1e-6) <= math.ceil(low - 1e-6)
