"""What a run found beyond accuracy, added to its summary: the combination never worse than the best
baseline (scored as a condition of its own, then set beside that baseline person by person), the
distortions of each condition and the fidelity of its aggregates, each in plain sentences."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentbank.instruments.model import Instrument
from evaluation.runs.records import BASELINES, ResultRow
from evaluation.scoring import metrics
from evaluation.scoring.combination import COMBINED, combined_rows
from evaluation.scoring.distortions import measure_distortions
from evaluation.scoring.distortions import sentences as distortion_sentences
from evaluation.scoring.fidelity import run_fidelity
from evaluation.scoring.fidelity import sentences as fidelity_sentences
from evaluation.scoring.scores import PersonScore

SENTENCE = "The combination"  # how the combination's sentence begins


def with_combination(rows: list[ResultRow], conditions: Sequence[str], seed: int) -> tuple[list[ResultRow], Any]:
    """The rows with the combination's own (where the run asks for it) and what it served."""
    if COMBINED not in conditions:
        return rows, None
    made, served = combined_rows(rows, seed=seed)
    return [*rows, *made], served


def add_findings(
    summary: dict[str, Any], rows: list[ResultRow], scores: list[PersonScore], instrument: Instrument,
    demographics: Mapping[str, Mapping[str, int]], *, served: Any = None, weights: Mapping[str, float] | None = None,
    reference: Mapping[str, Mapping[int, int]] | None = None, seed: int = 0,
) -> None:  # fmt: skip
    """Add ``distortions``, ``fidelity``, ``combination`` and their ``sentences`` to a run's summary."""
    summary["distortions"] = measure_distortions(rows, instrument, demographics, seed=seed)
    summary["fidelity"] = run_fidelity(rows, instrument, weights, reference, seed=seed)
    said = [s for name, found in summary["distortions"].items() for s in distortion_sentences(name, found)]
    said += fidelity_sentences(summary["fidelity"])
    if served is not None:
        summary["combination"] = {**served, **beside_best_baseline(scores, summary, seed)}
        said.insert(0, combination_sentence(summary["combination"]))
    summary["sentences"] = said


def beside_best_baseline(scores: list[PersonScore], summary: dict[str, Any], seed: int) -> dict[str, Any]:
    """The combination less the best baseline, and less the best agent condition, in normalized accuracy person
    by person (the same people, paired), each with a 95% bootstrap interval."""
    conditions = summary["conditions"]
    ran = {n: c["normalized_accuracy"] for n, c in conditions.items() if c["normalized_accuracy"] is not None}
    baselines = [n for n in ran if n in BASELINES]
    agents = [n for n in ran if n not in BASELINES and n != COMBINED]
    out: dict[str, Any] = {}
    for label, pool in (("baseline", baselines), ("agent", agents)):
        if not pool or COMBINED not in ran:
            continue
        best = max(sorted(pool), key=lambda n: ran[n])
        gap = _paired(scores, COMBINED, best)
        if len(gap):
            interval = metrics.bootstrap_interval(gap, seed=seed) if len(gap) > 1 else None
            out[label] = {"condition": best, "gain": float(np.mean(gap)), "interval": interval, "people": len(gap),
                          "below": bool(interval and interval[1] < 0)}  # fmt: skip
    return out


def _paired(scores: list[PersonScore], a: str, b: str) -> np.ndarray:
    mine = {s.person: s.normalized for s in scores if s.condition == a and s.normalized is not None}
    theirs = {s.person: s.normalized for s in scores if s.condition == b and s.normalized is not None}
    return np.array([mine[p] - theirs[p] for p in sorted(mine) if p in theirs])


def combination_sentence(found: Mapping[str, Any]) -> str:
    """What the combination served and how it stands beside the best baseline and the best agent."""
    served = ", ".join(f"{name} {share:.0%}" for name, share in found.get("served", {}).items())
    parts = [f"{SENTENCE} served, item by item as other people's answers chose, {served or 'nothing'}"]
    for label, words in (("baseline", "the best baseline"), ("agent", "the best agent condition")):
        if (g := found.get(label)) is not None:
            interval = g["interval"]
            ci = f" [{interval[0]:+.3f}, {interval[1]:+.3f}]" if interval else ""
            verdict = " — below it beyond its interval" if g["below"] else ""
            parts.append(f"{g['gain']:+.3f}{ci} normalized accuracy beside {words} ({g['condition']}){verdict}")
    return "; ".join(parts) + "."
