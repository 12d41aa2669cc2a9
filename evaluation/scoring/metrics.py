"""Metrics of Park et al. 2024 (SM 4): how well an agent predicts the person it simulates, normalized
by how consistently that person answers the same questions again.

Pure functions over plain sequences, so they can be checked against hand-computed cases.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np


def accuracy(predicted: Sequence[object], actual: Sequence[object]) -> float:
    """Share of items answered exactly as the person did (items missing on either side are skipped)."""
    pairs = [(p, a) for p, a in zip(predicted, actual, strict=True) if p is not None and a is not None]
    if not pairs:
        raise ValueError("no item was answered on both sides")
    return sum(p == a for p, a in pairs) / len(pairs)


def normalized_accuracy(agent_accuracy: float, self_consistency: float) -> float:
    """Agent accuracy over the person's own test–retest accuracy (Park et al.: 68.85 / 81.25 = 0.85)."""
    if self_consistency <= 0:
        raise ValueError("a person who never repeats an answer gives no ceiling to normalize by")
    return agent_accuracy / self_consistency


def mean_normalized_accuracy(
    agent_answers: Mapping[str, Sequence[object]],
    wave1: Mapping[str, Sequence[object]],
    wave2: Mapping[str, Sequence[object]],
) -> float:
    """Per person: accuracy against their wave-1 answers ÷ their own wave-2 vs wave-1 accuracy; then the mean."""
    scores = [
        normalized_accuracy(accuracy(agent_answers[p], wave1[p]), accuracy(wave2[p], wave1[p])) for p in agent_answers
    ]
    return float(np.mean(scores))


def ordinal_scale(code: int, codes: Sequence[int]) -> float:
    """An ordinal answer on 0–1 by its position among the item's ordered codes."""
    return codes.index(code) / (len(codes) - 1)


def one_hot_weighted_correlation(
    predicted: Sequence[int], actual: Sequence[int], options: Sequence[Sequence[int]]
) -> float:
    """Correlation of one-hot encoded categorical answers, each item's k dimensions weighted 1/k,
    so items with many options do not dominate."""
    x, y, w = [], [], []
    for p, a, codes in zip(predicted, actual, options, strict=True):
        for code in codes:
            x.append(float(p == code))
            y.append(float(a == code))
            w.append(1.0 / len(codes))
    return weighted_correlation(np.array(x), np.array(y), np.array(w))


def weighted_correlation(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """Pearson correlation with weights."""
    w = w / w.sum()
    mx, my = np.sum(w * x), np.sum(w * y)
    cov = np.sum(w * (x - mx) * (y - my))
    sx, sy = math.sqrt(np.sum(w * (x - mx) ** 2)), math.sqrt(np.sum(w * (y - my) ** 2))
    if sx == 0 or sy == 0:
        return float("nan")
    return float(cov / (sx * sy))


def mean_absolute_error(predicted: Sequence[float], actual: Sequence[float]) -> float:
    """MAE of continuous measures (Big Five trait scores, normalized game decisions)."""
    return float(np.mean(np.abs(np.asarray(predicted, float) - np.asarray(actual, float))))


def fisher_z_mean(correlations: Sequence[float]) -> float:
    """Average correlations through Fisher's z (atanh), as correlations do not average linearly."""
    clipped = np.clip(np.asarray(correlations, float), -0.999999, 0.999999)
    return float(np.tanh(np.mean(np.arctanh(clipped))))


def demographic_parity_difference(scores: Mapping[str, Sequence[float]]) -> float:
    """The gap between the best- and worst-served subgroup's mean score (0 is parity)."""
    means = [float(np.mean(values)) for values in scores.values() if len(values)]
    if len(means) < 2:
        raise ValueError("parity needs at least two subgroups with scores")
    return max(means) - min(means)


def bootstrap_interval(
    values: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """A percentile bootstrap interval of ``statistic`` over people (resampled with replacement)."""
    data = np.asarray(values, float)
    rng = np.random.default_rng(seed)
    stats = np.array([statistic(data[rng.integers(0, len(data), len(data))]) for _ in range(resamples)])
    tail = (1 - level) / 2 * 100
    return float(np.percentile(stats, tail)), float(np.percentile(stats, 100 - tail))
