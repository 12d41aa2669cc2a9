"""Whether a condition's answers depend on the person at all.

An agent can score well without looking at the person: a population's modal answer already matches
most people on many items, and a model that answers by an item's position in the call scores
whatever the positions happen to match. Three checks per condition tell these apart:

- **dispersion ratio**: how much the answers to an item vary across people (Gini–Simpson impurity),
  over how much the people's own answers vary. 0: everyone gets the same answer.
- **items that vary**: the share of items on which the answer is not the same for everyone.
- **shuffle control**: the accuracy when each item's answers are permuted across people, many times
  with a seed. An agent that uses the person beats its own shuffle; one that does not is
  indistinguishable from it, and the run says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from evaluation.runs.records import ResultRow

PERMUTATIONS = 500
# A condition whose accuracy is not above its shuffle control at this level is flagged.
ALPHA = 0.05


def impurity(codes: Sequence[int]) -> float:
    """Gini–Simpson impurity: the chance that two answers drawn at random differ."""
    if not codes:
        return 0.0
    counts = np.array(list(Counter(codes).values()), float) / len(codes)
    return float(1.0 - np.sum(counts**2))


def person_sensitivity(rows: Iterable[ResultRow], *, seed: int = 0, permutations: int = PERMUTATIONS) -> dict[str, Any]:
    """The three checks for one condition's rows (those with both an answer and the person's own)."""
    by_item: dict[str, tuple[list[int], list[int]]] = {}
    for row in rows:
        if row.predicted is not None and row.actual is not None:
            predicted, actual = by_item.setdefault(row.item, ([], []))
            predicted.append(row.predicted)
            actual.append(row.actual)
    items = {k: (np.array(p), np.array(a)) for k, (p, a) in by_item.items() if len(p) >= 2}
    if not items:
        return {"items": 0, "answers": 0}
    own = sum(impurity(list(a)) for _, a in items.values())
    agent = sum(impurity(list(p)) for p, _ in items.values())
    varying = sum(1 for p, _ in items.values() if len(set(p.tolist())) > 1)
    answers = sum(len(p) for p, _ in items.values())
    observed = sum(int(np.sum(p == a)) for p, a in items.values()) / answers
    rng = np.random.default_rng(seed)
    shuffled = np.array(
        [sum(int(np.sum(rng.permutation(p) == a)) for p, a in items.values()) / answers for _ in range(permutations)]
    )
    # The share of shuffles at least as accurate as the agent (with the agent itself counted once).
    p_value = float((1 + np.sum(shuffled >= observed - 1e-12)) / (permutations + 1))
    return {
        "items": len(items),
        "answers": answers,
        "dispersion_ratio": agent / own if own > 0 else None,
        "items_varying": varying / len(items),
        "accuracy": observed,
        "shuffle_accuracy": float(np.mean(shuffled)),
        "shuffle_interval": (float(np.percentile(shuffled, 2.5)), float(np.percentile(shuffled, 97.5))),
        "gain_over_shuffle": observed - float(np.mean(shuffled)),
        "p_value": p_value,
        "indistinguishable": p_value > ALPHA,
    }


def warnings_for(sensitivity: dict[str, dict[str, Any]], model_conditions: Iterable[str]) -> list[str]:
    """A plain sentence for each model condition whose answers do not depend on the person."""
    out = []
    for name in model_conditions:
        check = sensitivity.get(name, {})
        if not check.get("items"):
            continue
        if check["indistinguishable"]:
            out.append(
                f"{name}: indistinguishable from its shuffle control (accuracy {check['accuracy']:.3f} against "
                f"{check['shuffle_accuracy']:.3f} with answers permuted across people, p = {check['p_value']:.2f}); "
                f"its answers vary on {check['items_varying']:.0%} of items. Its score does not show that it "
                "answers as the person would."
            )
    return out
