"""A run's results turned into the paper's numbers: per person first, then averaged with intervals.

Every person is scored on the items they answered in both waves and the condition answered, so an
agent's accuracy and the person's own retest accuracy always cover the same items.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentbank.instruments.model import Instrument
from agentbank.publication.breakdowns import BREAKDOWNS
from evaluation.runs.records import MODEL_CONDITIONS, ResultRow
from evaluation.scoring import metrics
from evaluation.scoring.sensitivity import person_sensitivity, warnings_for

# The subgroups Demographic Parity Difference is reported for (open-tier breakdowns).
PARITY_BY = ("ideology", "party", "race", "sex", "education", "age_band")
# The fewest scored people a subgroup needs to enter a parity gap (the setting's default).
MIN_GROUP = 20


@dataclass(frozen=True)
class PersonScore:
    """One person under one condition."""

    person: str
    condition: str
    items: int
    accuracy: float
    self_consistency: float
    normalized: float | None  # None when the person never repeated an answer
    correlation: float | None
    self_correlation: float | None


def person_scores(rows: Iterable[ResultRow], instrument: Instrument) -> list[PersonScore]:
    """Accuracy, retest accuracy, their ratio and answer correlations, per person and condition."""
    grouped: dict[tuple[str, str], list[ResultRow]] = {}
    for row in rows:
        if None not in (row.predicted, row.actual, row.retest):
            grouped.setdefault((row.person, row.condition), []).append(row)
    scores = []
    for (person, condition), mine in sorted(grouped.items()):
        predicted = [r.predicted for r in mine]
        actual = [r.actual for r in mine]
        retest = [r.retest for r in mine]
        acc, self_acc = metrics.accuracy(predicted, actual), metrics.accuracy(retest, actual)
        normalized = metrics.normalized_accuracy(acc, self_acc) if self_acc > 0 else None
        corr, self_corr = _correlation(mine, instrument, "predicted"), _correlation(mine, instrument, "retest")
        scores.append(PersonScore(person, condition, len(mine), acc, self_acc, normalized, corr, self_corr))
    return scores


def _correlation(rows: list[ResultRow], instrument: Instrument, side: str) -> float | None:
    """Park et al.'s correlation: categorical answers one-hot with 1/k weights, ordinal ones on 0–1."""
    x, y, w = [], [], []
    for row in rows:
        item = instrument.item(row.item)
        guess = getattr(row, side)
        if item.kind == "ordinal" and guess in item.codes and row.actual in item.codes:
            x.append(metrics.ordinal_scale(guess, item.codes))
            y.append(metrics.ordinal_scale(row.actual, item.codes))
            w.append(1.0)
        elif item.kind == "categorical":
            for code in item.codes:
                x.append(float(guess == code))
                y.append(float(row.actual == code))
                w.append(1.0 / len(item.codes))
    if len(x) < 2:
        return None
    value = metrics.weighted_correlation(np.array(x), np.array(y), np.array(w))
    return None if math.isnan(value) else value


def summarize(
    scores: list[PersonScore],
    rows: list[ResultRow],
    demographics: Mapping[str, Mapping[str, int]],
    seed: int = 0,
    min_group: int = MIN_GROUP,
) -> dict[str, Any]:
    """The run's summary: per condition with bootstrap intervals, whether answers depend on the person,
    per item, and parity by subgroup (groups of at least ``min_group`` people)."""
    by_condition: dict[str, list[PersonScore]] = {}
    for score in scores:
        by_condition.setdefault(score.condition, []).append(score)
    conditions = {name: _condition_summary(group, seed) for name, group in by_condition.items()}
    sensitivity = {
        name: person_sensitivity([r for r in rows if r.condition == name], seed=seed) for name in by_condition
    }
    return {
        "conditions": conditions,
        "sensitivity": sensitivity,
        "warnings": warnings_for(sensitivity, [n for n in by_condition if n in MODEL_CONDITIONS]),
        "items": _item_accuracy(rows),
        "parity_min_group": min_group,
        "parity": {name: _parity(group, demographics, min_group) for name, group in by_condition.items()},
    }


def _condition_summary(group: list[PersonScore], seed: int) -> dict[str, Any]:
    normalized = [s.normalized for s in group if s.normalized is not None]
    accuracy = [s.accuracy for s in group]
    correlations = [s.correlation for s in group if s.correlation is not None]
    self_correlations = [s.self_correlation for s in group if s.self_correlation is not None]
    return {
        "people": len(group),
        "accuracy": float(np.mean(accuracy)),
        "accuracy_ci": metrics.bootstrap_interval(accuracy, seed=seed) if len(accuracy) > 1 else None,
        "self_consistency": float(np.mean([s.self_consistency for s in group])),
        "normalized_accuracy": float(np.mean(normalized)) if normalized else None,
        "normalized_accuracy_ci": metrics.bootstrap_interval(normalized, seed=seed) if len(normalized) > 1 else None,
        "correlation": metrics.fisher_z_mean(correlations) if correlations else None,
        "self_correlation": metrics.fisher_z_mean(self_correlations) if self_correlations else None,
    }


def _item_accuracy(rows: list[ResultRow]) -> dict[str, dict[str, float]]:
    """item → condition → share answered as in wave 1; ``retest`` is people's own repeat rate."""
    hits: dict[tuple[str, str], list[bool]] = {}
    for row in rows:
        if None in (row.predicted, row.actual, row.retest):
            continue
        hits.setdefault((row.item, row.condition), []).append(row.predicted == row.actual)
        hits.setdefault((row.item, "retest"), []).append(row.retest == row.actual)
    out: dict[str, dict[str, float]] = {}
    for (item, condition), values in sorted(hits.items()):
        # The retest rate is recorded once per condition's rows; it is the same share each time.
        out.setdefault(item, {})[condition] = sum(values) / len(values)
    return out


def _parity(group: list[PersonScore], demographics: Mapping[str, Mapping[str, int]], min_group: int) -> dict[str, Any]:
    """Mean normalized accuracy per subgroup and the gap between the best and worst served.

    A gap between groups of two or three people says nothing but noise, so only groups of at least
    ``min_group`` people are compared; every group's size is kept so the report shows what was left out.
    """
    out = {}
    for key in PARITY_BY:
        subgroups: dict[str, list[float]] = {}
        for score in group:
            if score.normalized is None:
                continue
            label = BREAKDOWNS[key].classify(demographics.get(score.person, {}))
            if label != "unknown":
                subgroups.setdefault(label, []).append(score.normalized)
        counts = {label: len(values) for label, values in sorted(subgroups.items())}
        large = {label: values for label, values in subgroups.items() if len(values) >= min_group}
        means = {label: float(np.mean(values)) for label, values in sorted(large.items())}
        gap = metrics.demographic_parity_difference(large) if len(large) > 1 else None
        out[key] = {"means": means, "counts": counts, "dpd": gap}
    return out
