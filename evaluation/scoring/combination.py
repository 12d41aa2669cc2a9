"""A combination never worse than the best baseline: item by item, serve a default source, or another one
where it was clearly more accurate on *other* people.

Cross-fitted: people are dealt into folds (seeded); each fold's choice is fit on the people of the other
folds only, on their first-survey answers, and then applied to the fold. Nobody's own answers decide what
they are served, so the combination is scored as honestly as the baselines are.

The default is the population's mode, unless the cell's mode or the best agent condition beat it over all
items by a paired margin of at least ``SWITCH_Z`` standard errors; each item is then served by the default
unless another source beat it on that item by the same margin. A plain "most accurate" choice overfits
where sources are close: leaving a fold out tilts the rest the other way, so two sources a point apart swap
between folds, each time toward the one worse on the fold, and the combination fell below the best
baseline it was meant to match. Asking for clear evidence shrinks each choice toward the default. The agent
condition is chosen alike: the first of ``PREFERENCE`` the run has, unless another is clearly better.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.runs.records import BASELINES, DERIVED, ResultRow

COMBINED = "combined"
FOLDS = 10
SWITCH_Z = 2.0  # how many standard errors a source must beat the default by, on an item, to be served there
MIN_PAIRS = 5  # fewer people than this who got both answers is no evidence at all
PREFERENCE = ("interview-survey", "interview", "survey", "persona", "demographic")

Answers = Mapping[str, Mapping[str, Mapping[str, int]]]  # person → item → source → code
Truth = Mapping[str, Mapping[str, int]]  # person → item → first-survey code


@dataclass(frozen=True)
class Choice:
    """What one fold serves: the agent condition taken, and the source served for each item."""

    agent: str | None
    sources: dict[str, str]  # item → source
    ranked: tuple[str, ...]  # every source, best first: the fallback where the chosen one did not answer


def fit_choice(answers: Answers, truth: Truth, people: Sequence[str]) -> Choice:
    """The choice fit on ``people`` (their answers in ``truth``, the only truth it reads)."""
    right: dict[str, dict[str, dict[str, int]]] = {}  # item → person → source → 1 if right
    overall: dict[str, list[int]] = {}  # source → [right, answered]
    for person in people:
        known = truth.get(person, {})
        for item, given in answers.get(person, {}).items():
            if item not in known:
                continue
            for source, code in given.items():
                hit = int(code == known[item])
                right.setdefault(item, {}).setdefault(person, {})[source] = hit
                tally = overall.setdefault(source, [0, 0])
                tally[0] += hit
                tally[1] += 1

    def rate(source: str) -> float:
        tally = overall[source]
        return tally[0] / tally[1] if tally[1] else -1.0

    # The default is chosen as each item's source is: the first baseline unless another source (a baseline or
    # the best agent condition) is clearly better over every item. "Whichever scored higher" would again lean
    # against the fold left out; a baseline default where the agents are clearly better would serve the
    # baseline on every item where the agents' lead is real but too small to show on one item.
    pairs = [h for by_person in right.values() for h in by_person.values()]
    # The agent condition is chosen the same way, from a fixed order: several conditions often score alike.
    agents = sorted((s for s in overall if s not in BASELINES), key=_preference)
    agent = _clearly_best(pairs, agents) if agents else None
    sources_in_order = [*(s for s in BASELINES if s in overall), *([agent] if agent else [])]
    default = _clearly_best(pairs, sources_in_order) if sources_in_order else None
    candidates = [*([default] if default else []), *(s for s in sources_in_order if s != default)]
    sources: dict[str, str] = {}
    for item, by_person in sorted(right.items()):
        chosen = _item_choice(list(by_person.values()), candidates)
        if chosen is not None:
            sources[item] = chosen
    ranked = tuple(sorted(overall, key=lambda s: (-rate(s), s not in BASELINES, s)))
    return Choice(agent, sources, ranked)


def _preference(condition: str) -> tuple[int, str]:
    """Agent conditions in the order tried first: the most informed (Park et al.'s best) first."""
    return (PREFERENCE.index(condition) if condition in PREFERENCE else len(PREFERENCE), condition)


def _item_choice(hits: Sequence[Mapping[str, int]], candidates: Sequence[str]) -> str | None:
    """The source served on one item: the first candidate that answered it (the default baseline, as a
    rule), unless another beat it clearly on the same people."""
    present = [s for s in candidates if any(s in h for h in hits)]
    return _clearly_best(hits, present) if present else None


def _clearly_best(hits: Sequence[Mapping[str, int]], sources: Sequence[str]) -> str:
    """``sources[0]``, or the source that beat it by the widest margin among those that beat it by at least
    ``SWITCH_Z`` standard errors of the paired difference (right minus right, on the same answers)."""
    default, best, best_margin = sources[0], sources[0], 0.0
    for source in sources[1:]:
        diffs = np.array([h[source] - h[default] for h in hits if source in h and default in h], dtype=float)
        if len(diffs) < MIN_PAIRS or diffs.mean() <= 0:
            continue
        error = diffs.std(ddof=1) / np.sqrt(len(diffs))
        if diffs.mean() >= SWITCH_Z * error and diffs.mean() > best_margin:
            best, best_margin = source, float(diffs.mean())
    return best


def folds_of(people: Sequence[str], seed: int, folds: int = FOLDS) -> list[list[str]]:
    """The people dealt into ``folds`` folds (at most one per person), in a seeded order."""
    ordered = sorted(people)
    count = max(1, min(folds, len(ordered)))
    order = np.random.default_rng(seed).permutation(len(ordered))
    return [[ordered[i] for i in order[f::count]] for f in range(count)]


def cross_fit(
    answers: Answers, truth: Truth, *, seed: int = 0, folds: int = FOLDS
) -> tuple[dict[str, dict[str, tuple[int, str]]], list[Choice]]:
    """Each person's combined answer per item and the source it came from, and each fold's choice: a fold's
    people are served by a choice fit on everyone else, whose truth alone is read."""
    served: dict[str, dict[str, tuple[int, str]]] = {}
    choices = []
    dealt = folds_of(list(answers), seed, folds)
    for fold in dealt:
        if len(dealt) < 2:
            break  # one person: nobody else to learn from
        inside = set(fold)
        others = [p for p in sorted(answers) if p not in inside]
        choice = fit_choice(answers, {p: truth[p] for p in others if p in truth}, others)
        choices.append(choice)
        for person in fold:
            for item, sources in answers[person].items():
                order = [choice.sources[item]] if item in choice.sources else []
                source = next((s for s in [*order, *choice.ranked] if s in sources), None)
                if source is not None:
                    served.setdefault(person, {})[item] = (sources[source], source)
    return served, choices


def combined_rows(rows: Sequence[ResultRow], *, seed: int = 0, folds: int = FOLDS) -> tuple[list[ResultRow], dict]:
    """The combination's rows (each beside the person's own two answers, for scoring as any condition is)
    and what it served: per source, the share of answers it gave."""
    answers: dict[str, dict[str, dict[str, int]]] = {}
    truth: dict[str, dict[str, int]] = {}
    kept: dict[tuple[str, str], ResultRow] = {}
    for row in rows:
        if row.condition in DERIVED or row.predicted is None:
            continue
        answers.setdefault(row.person, {}).setdefault(row.item, {})[row.condition] = row.predicted
        if row.actual is not None:
            truth.setdefault(row.person, {})[row.item] = row.actual
        kept.setdefault((row.person, row.item), row)
    served, choices = cross_fit(answers, truth, seed=seed, folds=folds)
    out = []
    by_source: dict[str, int] = {}
    for person, items in sorted(served.items()):
        for item, (code, source) in sorted(items.items()):
            base = kept[(person, item)]
            out.append(ResultRow(person, item, COMBINED, code, base.actual, base.retest))
            by_source[source] = by_source.get(source, 0) + 1
    total = sum(by_source.values())
    return out, {
        "served": {s: n / total for s, n in sorted(by_source.items(), key=lambda kv: -kv[1])} if total else {},
        "agents": sorted({c.agent for c in choices if c.agent}),
        "folds": len(choices),
    }
