"""Two ways a release could measure the same members, protected in memory from the same answers and weights:
the earlier workload (every table of every item: the overall, 12 one-way and 66 two-way tables, with its
budget's split) and the bank's (the overall and standing one-way tables, and the tables researchers asked
for from the reserve). ``bench_release_privacy`` compares what each shows a researcher, by kind of table.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from agentbank.instruments.model import Instrument
from agentbank.publication.distributions import DIMENSIONS, as_distribution, item_codes
from agentbank.publication.members import Members
from agentbank.publication.privacy import Budget, OpenDPNoise, Scales
from agentbank.publication.protection import protect_item
from agentbank.publication.weighting.releases import ReleaseWeights

BINS = ((0, 25), (25, 50), (50, 100), (100, 250), (250, 500), (500, 10**9))
# The earlier split of mu² per answer (overall, one-way, two-way, weighted, validity).
EARLIER_SHARES = {"overall": 0.10, "one_way": 0.40, "two_way": 0.10, "weighted": 0.30}


class NoNoise:
    """The exact tables: the truth each shown share is compared with."""

    def counts(self, values: np.ndarray, sigma: float) -> np.ndarray:
        return np.asarray(values, dtype=np.int64)

    def totals(self, values: np.ndarray, sigma: float) -> np.ndarray:
        return np.asarray(values, dtype=float)


@dataclass(frozen=True)
class Workload:
    """What one way of releasing measures, and with what noise."""

    name: str
    scales: Scales
    standing: tuple[str, ...]
    tables: list[tuple[str, ...]]


def earlier(budget: Budget) -> Workload:
    """Every table of every item, with the earlier split: one-way tables as standing, pairs at the two-way noise."""
    d, pairs = len(DIMENSIONS), len(DIMENSIONS) * (len(DIMENSIONS) - 1) // 2
    mu2 = budget.mu**2
    sigma = lambda share, n, change: math.sqrt(n * change / (share * mu2))  # noqa: E731
    scales = Scales(overall=sigma(EARLIER_SHARES["overall"], 1, 2), one_way=sigma(EARLIER_SHARES["one_way"], d, 2),
                    asked=sigma(EARLIER_SHARES["two_way"], pairs, 2),
                    weighted=sigma(EARLIER_SHARES["weighted"], d + 1, 2 * budget.weight_cap**2), validity=1.0,
                    standing=d)  # fmt: skip
    tables = [(), *((x,) for x in DIMENSIONS), *itertools.combinations(DIMENSIONS, 2)]
    return Workload("earlier: every table of every item", scales, DIMENSIONS, tables)


def bank(budget: Budget, standing: tuple[str, ...], asked: list[tuple[str, ...]], reserve: float) -> Workload:
    """The bank's: the standing tables of every item, and ``asked`` (the reserve's) of every item."""
    tables = [(), *((x,) for x in standing), *asked]
    scales = Scales.of(budget, len(standing), reserve)
    return Workload("bank: standing workload and asked tables", scales, standing, tables)


def kind(dims: tuple[str, ...], standing: tuple[str, ...], weighted: bool) -> str:
    if weighted:
        return "weighted"
    if not dims:
        return "overall"
    if len(dims) == 1:
        return "one-way" if dims[0] in standing else "one-way asked"
    return "two-way asked"


def loss(
    members: Members, instrument: Instrument, workload: Workload, weights: ReleaseWeights, k: int,
    kinds_standing: tuple[str, ...], compared: set[tuple[str, ...]],
) -> dict[str, dict[str, dict[str, float | None]]]:  # fmt: skip
    """Per kind of table and true group size: the share of groups shown, and the mean and 95th-percentile
    absolute error of every shown share (points), over the tables in ``compared`` (the same for both ways)."""
    errors: dict[tuple[str, tuple[int, int]], list[float]] = defaultdict(list)
    shown: dict[tuple[str, tuple[int, int]], list[bool]] = defaultdict(list)
    tables = [t for t in workload.tables if t in compared]
    for instrument_key, item_key in sorted(members.answers):
        item = instrument.item(item_key)
        codes = tuple(code for code, _ in item_codes(item))
        noisy = protect_item(members, instrument_key, item, codes, workload.scales, OpenDPNoise(), weights, tables,
                             workload.standing)  # fmt: skip
        exact = protect_item(members, instrument_key, item, codes, workload.scales, NoNoise(), weights, tables,
                             workload.standing)  # fmt: skip
        overall = next(t.body for t in noisy if not t.dims)
        for measured, truth in zip(noisy, exact, strict=True):
            table = as_distribution(0, instrument, item, measured.dims, k, measured.body, overall, members=len(members),
                                    weights=weights.about, mu=1.0)  # fmt: skip
            true = {(tuple(row[0]), row[1]): row[2:] for row in truth.body["cells"]}
            sizes: dict[tuple[str, ...], float] = defaultdict(float)
            weighted_sizes: dict[tuple[str, ...], float] = defaultdict(float)
            for (group, _code), figures in true.items():
                sizes[group] += figures[0]
                weighted_sizes[group] += figures[1] if len(figures) > 1 else 0.0
            for group in table.groups:
                names = tuple(group["group"][d] for d in table.breakdowns)
                n = int(sizes[names])
                if n:
                    span = next(b for b in BINS if b[0] <= n < b[1])
                    shown[(kind(tuple(table.breakdowns), kinds_standing, False), span)].append(group["n"] is not None)
            for cell in table.cells:
                names = tuple(cell.group[d] for d in table.breakdowns)
                n = int(sizes[names])
                if not n or cell.share is None:
                    continue
                span = next(b for b in BINS if b[0] <= n < b[1])
                figures = true[(names, cell.code)]
                errors[(kind(tuple(table.breakdowns), kinds_standing, False), span)].append(
                    100 * abs(cell.share - figures[0] / n)
                )
                if cell.weighted_share is not None and weighted_sizes[names] > 0:
                    errors[("weighted", span)].append(
                        100 * abs(cell.weighted_share - figures[1] / weighted_sizes[names])
                    )
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for name, span in sorted(set(errors) | set(shown)):
        values, seen = errors.get((name, span), []), shown.get((name, span), [])
        label = f"{span[0]}-{span[1] - 1}" if span[1] < 10**9 else f"{span[0]}+"
        out.setdefault(name, {})[label] = {
            "shares": len(values), "groups": len(seen),
            "shown_share": statistics.fmean(seen) if seen else None,
            "mean_abs_error_points": statistics.fmean(values) if values else None,
            "p95_abs_error_points": float(np.percentile(values, 95)) if values else None,
        }  # fmt: skip
    return out
