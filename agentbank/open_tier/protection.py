"""Every table of a release, counted from its members in memory and protected once, when it is cut.

For each item: the overall table, one table per breakdown and one per pair of breakdowns, each a count
of members per group and code with the release's noise (``privacy.Scales``); the overall and one-way
tables also carry weighted totals with their own noise. The noisy figures are all a release keeps: what
a reader later sees of a group (its shares, intervals, or that it is hidden) is arithmetic on them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentbank.instruments.model import Item
from agentbank.open_tier.breakdowns import BREAKDOWNS
from agentbank.open_tier.members import NO_ANSWER, Members
from agentbank.open_tier.privacy import Noise, Scales
from agentbank.open_tier.weighting.releases import ReleaseWeights

MAX_BREAKDOWNS = 2


def table_keys(dimensions: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every table a release holds of an item: overall, by each breakdown, by each pair (in order)."""
    return [(), *((d,) for d in dimensions), *itertools.combinations(dimensions, MAX_BREAKDOWNS)]


@dataclass(frozen=True)
class ProtectedTable:
    """One table as stored: noisy counts per (group, code), and per group; weighted totals where made."""

    dims: tuple[str, ...]
    body: dict[str, Any]


def protect_item(
    members: Members, instrument: str, item: Item, codes: tuple[int, ...], scales: Scales, noise: Noise,
    weights: ReleaseWeights,
) -> list[ProtectedTable]:  # fmt: skip
    """The item's tables, each protected with the noise of its kind (drawn in one batch per kind: the
    same draws as table by table, for a fraction of the calls)."""
    answers = members.answers.get((instrument, item.key))
    if answers is None:
        return []
    # Codes outside the item's (an older version's) are not counted: the table would have no place for them.
    code_index = np.full(len(answers), -1, dtype=np.int64)
    for position, code in enumerate(codes):
        code_index[answers == code] = position
    counted = (answers != NO_ANSWER) & (code_index >= 0)
    member_weights = weights.of(members.profiles)[counted]
    keys = table_keys(members.dimensions)
    exact, weighted = {}, {}
    for dims in keys:
        index = (_groups(members, dims) * len(codes) + code_index)[counted]
        cells = int(np.prod([len(BREAKDOWNS[d].categories) for d in dims])) * len(codes)
        exact[dims] = np.bincount(index, minlength=cells)
        if len(dims) < MAX_BREAKDOWNS:  # two-way tables are not weighted: the budget's choice
            weighted[dims] = np.bincount(index, weights=member_weights, minlength=cells)
    noisy = _noisy(exact, lambda dims: _count_scale(scales, dims), noise.counts)
    noisy_weighted = _noisy(weighted, lambda _: scales.weighted, noise.totals)
    return [ProtectedTable(dims, _body(dims, codes, noisy[dims], noisy_weighted.get(dims), scales)) for dims in keys]


def _groups(members: Members, dims: tuple[str, ...]) -> np.ndarray:
    """Each member's group in the table over ``dims`` (0 for the overall table)."""
    group = np.zeros(len(members), dtype=np.int64)
    for d in dims:
        group = group * len(BREAKDOWNS[d].categories) + members.profiles[:, members.dimensions.index(d)]
    return group


def _count_scale(scales: Scales, dims: tuple[str, ...]) -> float:
    return scales.overall if not dims else scales.one_way if len(dims) == 1 else scales.two_way


def _noisy(
    tables: dict[tuple[str, ...], np.ndarray], scale: Callable[[tuple[str, ...]], float],
    draw: Callable[[np.ndarray, float], np.ndarray],
) -> dict[tuple[str, ...], np.ndarray]:  # fmt: skip
    """Noise for every table, drawn in one call per noise scale and split back by table."""
    by_scale: dict[float, list[tuple[str, ...]]] = {}
    for dims in tables:
        by_scale.setdefault(scale(dims), []).append(dims)
    out = {}
    for sigma, group in by_scale.items():
        drawn = draw(np.concatenate([tables[d] for d in group]), sigma)
        bounds = np.cumsum([0, *(len(tables[d]) for d in group)])
        out.update({d: drawn[bounds[n] : bounds[n + 1]] for n, d in enumerate(group)})
    return out


def _body(
    dims: tuple[str, ...], codes: tuple[int, ...], counts: np.ndarray, weighted: np.ndarray | None, scales: Scales
) -> dict[str, Any]:
    """A protected table as stored: every group's noisy count per code (and weighted total where made)."""
    body: dict[str, Any] = {"codes": list(codes), "sigma": round(_count_scale(scales, dims), 4), "cells": []}
    if weighted is not None:
        body["sigma_weighted"] = round(scales.weighted, 4)
    for g, names in enumerate(itertools.product(*(BREAKDOWNS[d].categories for d in dims))):
        for c, code in enumerate(codes):
            at = g * len(codes) + c
            row = [list(names), code, int(counts[at])]
            if weighted is not None:
                row.append(round(float(weighted[at]), 3))
            body["cells"].append(row)
    return body


@dataclass(frozen=True)
class ProtectedValidity:
    """An item's validity figures over a release's members, each count with the release's noise."""

    item: str
    scored: int
    right: int
    repeated: int
    baseline_right: int | None


def protect_validity(flags: np.ndarray, item: str, scales: Scales, noise: Noise) -> ProtectedValidity:
    """Counts of members scored on the item, their agents right, the members who repeated themselves,
    and the baseline right (one noisy vector: each person moves each count by at most one)."""
    scored = flags[:, 0] >= 0
    baseline = flags[:, 2] >= 0
    exact = np.array([scored.sum(), (flags[scored, 0] == 1).sum(), (flags[scored, 1] == 1).sum(),
                      (flags[baseline, 2] == 1).sum()], dtype=np.int64)  # fmt: skip
    noisy = noise.counts(exact, scales.validity)
    return ProtectedValidity(item, int(noisy[0]), int(noisy[1]), int(noisy[2]),
                             int(noisy[3]) if baseline.any() else None)  # fmt: skip
