"""Item by item across people: how closely a condition's answers follow the people's (correlation) and how
much they vary beside the people's own (spread), each with a bootstrap interval over people.

An item's answers are scale positions (0–1 by the option's rank) for ordinal and two-option items, and
one-hot indicators for a categorical item of more options (its options stacked, each person's in turn).
A bootstrap draw resamples people once for every item (a count per person), so a draw is the same people
throughout. Pure numpy; nothing is read but the arrays given.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agentbank.instruments.model import Item
from evaluation.scoring import metrics

EPS = 1e-12


@dataclass(frozen=True)
class ItemData:
    """One item's answers: ``x`` the condition's, ``y`` the people's own, ``people`` the index of the person
    each observation belongs to; ``options`` is the number of stacked one-hot options (1: a scale)."""

    people: np.ndarray
    x: np.ndarray
    y: np.ndarray
    options: int = 1


def item_data(item: Item, pairs: Sequence[tuple[int, int, int]]) -> ItemData | None:
    """``pairs``: (person index, the condition's code, the person's code). None when nothing is usable."""
    codes = item.codes
    usable = [(p, a, b) for p, a, b in pairs if a in codes and b in codes]
    if not usable:
        return None
    if item.kind == "ordinal" or len(codes) == 2:
        people = np.array([p for p, _, _ in usable])
        x = np.array([metrics.ordinal_scale(a, codes) for _, a, _ in usable], float)
        y = np.array([metrics.ordinal_scale(b, codes) for _, _, b in usable], float)
        return ItemData(people, x, y)
    people = np.repeat([p for p, _, _ in usable], len(codes))
    x = np.array([float(a == c) for _, a, _ in usable for c in codes])
    y = np.array([float(b == c) for _, _, b in usable for c in codes])
    return ItemData(people, x, y, len(codes))


def draws(people: int, resamples: int, seed: int) -> np.ndarray:
    """The point estimate's weights (every person once) then ``resamples`` bootstrap draws: counts per person."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(people, np.full(people, 1.0 / people), size=resamples) if people else np.zeros((0, 0))
    return np.vstack([np.ones((1, people)), counts]).astype(float)


def correlations(data: ItemData, weights: np.ndarray) -> np.ndarray:
    """Pearson r of the condition's answers with the people's across people, per draw; a categorical item's
    options are each centred on their own share and pooled (covariances and variances summed over options,
    which is the phi coefficient for two). 0 where the condition gives everyone the same answer (it says
    nothing of who answers what), NaN where the people all answer alike."""
    w = weights[:, data.people]
    cov, vx, vy = (np.zeros(len(weights)) for _ in range(3))
    with np.errstate(invalid="ignore", divide="ignore"):
        for c in range(data.options):
            part, x, y = w[:, c :: data.options], data.x[c :: data.options], data.y[c :: data.options]
            total = part.sum(axis=1)
            mx, my = part @ x / total, part @ y / total
            cov += part @ (x * y) / total - mx * my
            vx += part @ (x**2) / total - mx**2
            vy += part @ (y**2) / total - my**2
        r = np.where(vx > EPS, cov / np.sqrt(np.clip(vx, EPS, None) * np.clip(vy, EPS, None)), 0.0)
    return np.where(vy > EPS, np.clip(r, -1.0, 1.0), np.nan)


def spreads(data: ItemData, weights: np.ndarray) -> np.ndarray:
    """The condition's variance across people over the people's own, per draw (a categorical item's
    variance is its Gini–Simpson impurity); NaN where the people all answer alike."""
    w = weights[:, data.people]
    with np.errstate(invalid="ignore", divide="ignore"):
        if data.options == 1:
            vx, vy = _variance(w, data.x), _variance(w, data.y)
        else:
            vx, vy = _impurity(w, data.x, data.options), _impurity(w, data.y, data.options)
        return np.where(vy > EPS, vx / np.clip(vy, EPS, None), np.nan)


def _variance(w: np.ndarray, v: np.ndarray) -> np.ndarray:
    total = w.sum(axis=1)
    mean = w @ v / total
    return w @ (v**2) / total - mean**2


def _impurity(w: np.ndarray, v: np.ndarray, options: int) -> np.ndarray:
    shares = [w[:, c::options] @ v[c::options] / w[:, c::options].sum(axis=1) for c in range(options)]
    return 1.0 - np.sum(np.square(shares), axis=0)


def across_items(
    items: Sequence[ItemData], people: int, *, resamples: int = 1000, seed: int = 0
) -> dict[str, object] | None:
    """The mean correlation (through Fisher's z) and the mean spread ratio over items, each with a 95%
    bootstrap interval over people, and each item's own figures."""
    if not items or not people:
        return None
    weights = draws(people, resamples, seed)
    r = np.array([correlations(d, weights) for d in items])  # items × draws
    s = np.array([spreads(d, weights) for d in items])
    with warnings.catch_warnings():  # a draw in which no item varies gives NaN, not a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        mean_r = np.tanh(np.nanmean(np.arctanh(np.clip(r, -0.999999, 0.999999)), axis=0))
        mean_s = np.nanmean(s, axis=0)
    return {
        "items": int(np.sum(~np.isnan(r[:, 0]))),
        "correlation": _figure(mean_r),
        "spread": _figure(mean_s),
        "item_correlation": [None if np.isnan(v) else float(v) for v in r[:, 0]],
        "item_spread": [None if np.isnan(v) else float(v) for v in s[:, 0]],
    }


def _figure(values: np.ndarray) -> dict[str, object] | None:
    """The point estimate (the first draw) and the 95% percentile interval of the rest."""
    if np.isnan(values[0]):
        return None
    rest = values[1:][~np.isnan(values[1:])]
    interval = (float(np.percentile(rest, 2.5)), float(np.percentile(rest, 97.5))) if len(rest) > 1 else None
    return {"value": float(values[0]), "interval": interval}
