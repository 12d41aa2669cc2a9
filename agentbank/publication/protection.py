"""Every table of a release's workload, counted from its members in memory and protected once, when it is cut.

For each item, the tables of the workload (``workload``: the overall table, one per standing breakdown, and
those researchers asked for), each a count of members per group and code with the release's noise
(``privacy.Scales``); the overall and standing one-way tables also carry weighted totals with their own
noise. The noisy counts are then made consistent (``consistency``: non-negative, every table's totals equal
to the overall table's), which is post-processing and spends nothing; both are kept. What a reader later
sees of a group (its shares, intervals, or that it is hidden) is arithmetic on them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentbank.instruments.model import Item
from agentbank.publication.breakdowns import BREAKDOWNS
from agentbank.publication.consistency import Measured, consistent
from agentbank.publication.members import NO_ANSWER, Members
from agentbank.publication.privacy import Noise, Scales
from agentbank.publication.weighting.releases import ReleaseWeights

MAX_BREAKDOWNS = 2


@dataclass(frozen=True)
class ProtectedTable:
    """One table as stored: noisy counts per (group, code), and per group; weighted totals where made."""

    dims: tuple[str, ...]
    body: dict[str, Any]


def protect_item(
    members: Members, instrument: str, item: Item, codes: tuple[int, ...], scales: Scales, noise: Noise,
    weights: ReleaseWeights, keys: list[tuple[str, ...]], standing: tuple[str, ...],
) -> list[ProtectedTable]:  # fmt: skip
    """The item's tables ``keys``, each protected with the noise of its kind (drawn in one batch per kind:
    the same draws as table by table, for a fraction of the calls), then made consistent."""
    answers = members.answers.get((instrument, item.key))
    if answers is None:
        return []
    # Codes outside the item's (an older version's) are not counted: the table would have no place for them.
    code_index = np.full(len(answers), -1, dtype=np.int64)
    for position, code in enumerate(codes):
        code_index[answers == code] = position
    counted = (answers != NO_ANSWER) & (code_index >= 0)
    member_weights = weights.of(members.profiles)[counted]
    exact, weighted = {}, {}
    for dims in keys:
        index = (_groups(members, dims) * len(codes) + code_index)[counted]
        cells = int(np.prod([len(BREAKDOWNS[d].categories) for d in dims])) * len(codes)
        exact[dims] = np.bincount(index, minlength=cells)
        if not dims or (len(dims) == 1 and dims[0] in standing):  # asked tables are not weighted: the budget's choice
            weighted[dims] = np.bincount(index, weights=member_weights, minlength=cells)
    noisy = _noisy(exact, lambda dims: scales.of_table(dims, standing), noise.counts)
    noisy_weighted = _noisy(weighted, lambda _: scales.weighted, noise.totals)
    shapes = {dims: tuple(len(BREAKDOWNS[d].categories) for d in dims) for dims in keys}
    made = consistent([Measured(dims, noisy[dims], scales.of_table(dims, standing), shapes[dims]) for dims in keys],
                      len(codes))  # fmt: skip
    return [ProtectedTable(dims, _body(dims, codes, made[dims], noisy[dims], noisy_weighted.get(dims),
                                       scales.of_table(dims, standing), scales.weighted)) for dims in keys]  # fmt: skip


def _groups(members: Members, dims: tuple[str, ...]) -> np.ndarray:
    """Each member's group in the table over ``dims`` (0 for the overall table)."""
    group = np.zeros(len(members), dtype=np.int64)
    for d in dims:
        group = group * len(BREAKDOWNS[d].categories) + members.profiles[:, members.dimensions.index(d)]
    return group


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
    dims: tuple[str, ...], codes: tuple[int, ...], counts: np.ndarray, measured: np.ndarray,
    weighted: np.ndarray | None, sigma: float, sigma_weighted: float,
) -> dict[str, Any]:  # fmt: skip
    """A protected table as stored: every group's consistent count per code (and weighted total where made),
    and the noisy counts as measured (``measured``, in the same order), from which a group is shown or hidden
    without the bias that clipping at zero gives an empty group."""
    body: dict[str, Any] = {"codes": list(codes), "sigma": round(sigma, 4), "cells": [],
                            "measured": [int(v) for v in measured]}  # fmt: skip
    if weighted is not None:
        body["sigma_weighted"] = round(sigma_weighted, 4)
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
