"""A release's weights, made only from what the release protects.

Raking needs the members' joint distribution over the raked breakdowns (sex × age band × race ×
education × region). The release counts its members in every pair of those breakdowns, with noise;
the joint is fitted to those protected pairs by iterative proportional fitting (a log-linear model of
all two-way associations), raked to the population margins (``raking``, by ``svy``), and each weight is
kept within ``[1/cap, cap]``. Every step after the noise is arithmetic on released figures, so the
weights cost nothing more; and since no weight exceeds ``cap``, one person moves a weighted total by at
most ``cap`` — the bound the weighted tables' noise is scaled to.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentbank.publication.breakdowns import BREAKDOWNS
from agentbank.publication.privacy import Noise
from agentbank.publication.weighting.raking import RakingError, rake
from agentbank.publication.weighting.targets import RAKED, Targets

FIT_ROUNDS = 50


@dataclass(frozen=True)
class ReleaseWeights:
    """One weight per cell of the raked breakdowns (a grid indexed by category positions)."""

    positions: tuple[int, ...]  # where each raked breakdown sits in a member's profile
    grid: np.ndarray | None  # None: no weights (``about`` says why)
    about: dict[str, Any] = field(default_factory=dict)

    def of(self, profiles: np.ndarray) -> np.ndarray:
        """Each member's weight (1 everywhere when the release has none)."""
        if self.grid is None or not len(profiles):
            return np.ones(len(profiles))
        return self.grid[tuple(profiles[:, p] for p in self.positions)]


def pair_counts(profiles: np.ndarray, dimensions: tuple[str, ...], noise: Noise, sigma: float) -> dict:
    """The members counted in every pair of raked breakdowns, with noise (negative counts read as none)."""
    raked = [d for d in RAKED if d in dimensions]
    out = {}
    for a, b in itertools.combinations(raked, 2):
        size_a, size_b = len(BREAKDOWNS[a].categories), len(BREAKDOWNS[b].categories)
        index = profiles[:, dimensions.index(a)].astype(np.int64) * size_b + profiles[:, dimensions.index(b)]
        exact = np.bincount(index, minlength=size_a * size_b)
        out[(a, b)] = np.maximum(noise.counts(exact, sigma), 0).reshape(size_a, size_b).astype(float)
    return out


def fitted_joint(pairs: dict[tuple[str, str], np.ndarray], raked: tuple[str, ...]) -> np.ndarray:
    """The joint distribution over ``raked`` closest to uniform that meets every protected pair (IPF)."""
    shape = tuple(len(BREAKDOWNS[d].categories) for d in raked)
    total = float(np.mean([t.sum() for t in pairs.values()])) if pairs else 0.0
    joint = np.full(shape, total / max(int(np.prod(shape)), 1))
    for _ in range(FIT_ROUNDS):
        for (a, b), table in pairs.items():
            i, j = raked.index(a), raked.index(b)
            others = tuple(k for k in range(len(raked)) if k not in (i, j))
            current = joint.sum(axis=others)
            ratio = np.divide(table, current, out=np.zeros_like(table), where=current > 0)
            expand: list[Any] = [np.newaxis] * len(raked)
            expand[i], expand[j] = slice(None), slice(None)
            joint = joint * ratio[tuple(expand)]
    return joint


def release_weights(
    profiles: np.ndarray, dimensions: tuple[str, ...], targets: Targets, noise: Noise, sigma: float, cap: float
) -> ReleaseWeights:
    """The release's weights, or none with the reason (too few members, margins that cannot be met)."""
    raked = tuple(d for d in RAKED if d in dimensions and d in targets.margins)
    positions = tuple(dimensions.index(d) for d in raked)
    if len(raked) < 2:
        return ReleaseWeights(positions, None, {"source": targets.source, "error": "fewer than two raked breakdowns"})
    joint = fitted_joint(pair_counts(profiles, dimensions, noise, sigma), raked)
    cells = [c for c in itertools.product(*(range(n) for n in joint.shape)) if joint[c] > 1e-6]
    named = [tuple(BREAKDOWNS[d].categories[i] for d, i in zip(raked, c, strict=True)) for c in cells]
    try:
        weights = rake(named, raked, targets, [joint[c] for c in cells])
    except RakingError as exc:
        return ReleaseWeights(positions, None, {"source": targets.source, "error": str(exc)})
    grid = np.ones(joint.shape)
    for cell, name in zip(cells, named, strict=True):
        grid[cell] = weights.of(name)
    grid = np.clip(grid / _mean(grid, joint), 1 / cap, cap)
    grid = np.clip(grid / _mean(grid, joint), 1 / cap, cap)  # once more: the mean moved when a few were capped
    deff = float(joint.sum() * (joint * grid**2).sum() / (joint * grid).sum() ** 2) if joint.sum() else None
    about = {"source": targets.source, "raked_on": list(raked), "notes": weights.notes, "cap": cap,
             "deff": None if deff is None else round(deff, 3),
             "method": "raked on the members' joint fitted to protected two-way counts"}  # fmt: skip
    return ReleaseWeights(positions, grid, about)


def _mean(grid: np.ndarray, joint: np.ndarray) -> float:
    total = joint.sum()
    return float((grid * joint).sum() / total) if total else 1.0


def weights_about(release_weights: dict[str, Any] | None) -> dict[str, object] | None:
    """What a table says of its release's weights (None for a release without)."""
    if release_weights is None:
        return None
    if "error" in release_weights:
        return {"source": release_weights["source"], "raked_on": [], "error": release_weights["error"]}
    return {key: release_weights.get(key) for key in ("source", "raked_on", "notes", "cap", "method", "deff")}
