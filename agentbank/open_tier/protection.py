"""Every table of a release, counted from its members in memory and protected once, when it is cut.

For each item: the overall table, one table per breakdown and one per pair of breakdowns, each a count
of members per group and code with the release's noise (``privacy.Scales``); the overall and one-way
tables also carry weighted totals with their own noise. The noisy figures are all a release keeps: what
a reader later sees of a group (its shares, intervals, or that it is hidden) is arithmetic on them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
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
) -> Iterator[ProtectedTable]:  # fmt: skip
    """The item's tables, each protected on its own with the noise of its kind."""
    answers = members.answers.get((instrument, item.key))
    if answers is None:
        return
    answered = answers != NO_ANSWER
    position = {code: i for i, code in enumerate(codes)}
    # Codes outside the item's (an older version's) are not counted: the table would have no place for them.
    code_index = np.array([position.get(int(c), -1) for c in answers], dtype=np.int64)
    counted = answered & (code_index >= 0)
    member_weights = weights.of(members.profiles)
    for dims in table_keys(members.dimensions):
        yield ProtectedTable(dims, _protect(members, dims, codes, code_index, counted, scales, noise,
                                            member_weights if len(dims) < MAX_BREAKDOWNS else None))  # fmt: skip


def _protect(
    members: Members, dims: tuple[str, ...], codes: tuple[int, ...], code_index: np.ndarray, counted: np.ndarray,
    scales: Scales, noise: Noise, member_weights: np.ndarray | None,
) -> dict[str, Any]:  # fmt: skip
    sizes = [len(BREAKDOWNS[d].categories) for d in dims]
    group = np.zeros(len(code_index), dtype=np.int64)
    for d, size in zip(dims, sizes, strict=True):
        group = group * size + members.profiles[:, members.dimensions.index(d)]
    index = (group * len(codes) + code_index)[counted]
    cells = int(np.prod(sizes)) * len(codes) if sizes else len(codes)
    sigma = scales.overall if not dims else scales.one_way if len(dims) == 1 else scales.two_way
    counts = noise.counts(np.bincount(index, minlength=cells), sigma)
    weighted = None
    if member_weights is not None:
        exact = np.bincount(index, weights=member_weights[counted], minlength=cells)
        weighted = noise.totals(exact, scales.weighted)
    body: dict[str, Any] = {"codes": list(codes), "sigma": round(sigma, 4), "cells": []}
    if weighted is not None:
        body["sigma_weighted"] = round(scales.weighted, 4)
    groups = itertools.product(*(BREAKDOWNS[d].categories for d in dims))
    for g, names in enumerate(groups):
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
