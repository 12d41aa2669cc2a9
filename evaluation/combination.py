"""A combination never worse than the best baseline: item by item, serve whichever of the run's baselines
and its best agent condition was most accurate on *other* people.

Cross-fitted: people are dealt into folds (seeded); each fold's choice is fit on the people of the other
folds only, on their first-survey answers, and then applied to the fold. Nobody's own answers decide what
they are served, so the combination is scored as honestly as the baselines are. On an item where the
agents carry no more than a baseline, the baseline is served (ties go to the baselines); where they carry
more, the agent's answer is. The agent condition is the one most accurate over every item on the same
other people (the interview + survey condition where it runs, as a rule).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.runs import BASELINES, DERIVED, ResultRow

COMBINED = "combined"
FOLDS = 10

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
    hits: dict[tuple[str, str], list[int]] = {}  # (source, item) → [right, answered]
    for person in people:
        known = truth.get(person, {})
        for item, given in answers.get(person, {}).items():
            if item not in known:
                continue
            for source, code in given.items():
                tally = hits.setdefault((source, item), [0, 0])
                tally[0] += int(code == known[item])
                tally[1] += 1
    overall: dict[str, list[int]] = {}
    for (source, _), (right, answered) in hits.items():
        tally = overall.setdefault(source, [0, 0])
        tally[0] += right
        tally[1] += answered

    def rate(tally: Sequence[int] | None) -> float:
        return tally[0] / tally[1] if tally and tally[1] else -1.0

    baselines = sorted((s for s in overall if s in BASELINES), key=lambda s: (-rate(overall[s]), BASELINES.index(s)))
    agents = sorted((s for s in overall if s not in BASELINES), key=lambda s: (-rate(overall[s]), s))
    candidates = [*baselines, *agents[:1]]  # the baselines first: they win ties
    items = sorted({item for _, item in hits})
    sources: dict[str, str] = {}
    for item in items:
        scored = [(rate(hits.get((s, item))), -n, s) for n, s in enumerate(candidates) if (s, item) in hits]
        if scored:
            sources[item] = max(scored)[2]  # the most accurate; of equals, the earliest candidate
    ranked = tuple(sorted(overall, key=lambda s: (-rate(overall[s]), s not in BASELINES, s)))
    return Choice(agents[0] if agents else None, sources, ranked)


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
