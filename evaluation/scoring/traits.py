"""The Big Five and the economic games, scored as Park et al. score them: not item by item but per
measure (a trait's mean, a game's share given), across people, as correlation and mean absolute error
against the first survey, beside the people's own retest and a population-mean baseline; and the mean
shift from the people's own choices (on a game, toward the self-interested choice: hyper-rationality).

A Big Five trait is the mean of its items on the 1–5 scale, reverse-keyed items turned (6 − answer);
a game is its answer on the 0–1 scale (share given, sent, returned, contributed; 1 for cooperating).
Declined items are left out of a trait; a trait or game without any answer is missing for that person.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agentbank.instruments.model import Instrument
from evaluation.runs.records import RowSealer, append_lines, read_lines
from evaluation.scoring.metrics import bootstrap_interval

POPULATION_MEAN = "population-mean"
TRAITS_FILE = "traits.jsonl"
MIN_PEOPLE = 3  # a correlation over fewer people is not reported


@dataclass(frozen=True)
class TraitRow:
    """One condition's answer to one Big Five or game item for one person (the person's own answers
    are never written: they are joined from the bank's survey when scored)."""

    person: str
    instrument: str
    item: str
    condition: str
    value: float | None
    sealed: str = ""  # the value, sealed with the person's key (the bank's own participants)


def read_rows(path: Path, sealer: RowSealer | None = None) -> list[TraitRow]:
    """The trait answers of the run in ``path`` so far, opened (a withdrawn person's are left out)."""
    rows = read_lines(path / TRAITS_FILE, TraitRow)
    if sealer is None:
        return rows
    opened = []
    for row in rows:
        value = sealer.open(row.person, row.sealed) if row.sealed else None
        if value is not None:
            opened.append(replace(row, value=value["value"], sealed=""))
    return opened


def append_rows(path: Path, rows: Sequence[TraitRow], sealer: RowSealer | None = None) -> None:
    """Add trait answers to the run in ``path`` durably, sealed with each person's key where given."""
    if sealer is not None:
        rows = [replace(r, value=None, sealed=sealed) for r in rows
                if (sealed := sealer.seal(r.person, {"value": r.value})) is not None]  # fmt: skip
    append_lines(path / TRAITS_FILE, rows)


def measures(instrument: Instrument, answers: Mapping[str, float | None]) -> dict[str, float]:
    """A person's Big Five traits (mean on 1–5) or games (0–1) from their answers by item key."""
    by_measure: dict[str, list[float]] = {}
    for item in instrument.items:
        value = answers.get(item.key)
        if value is None:
            continue
        if "trait" in item.meta:
            score = 6 - float(value) if item.meta.get("reverse") else float(value)
            by_measure.setdefault(item.meta["trait"], []).append(score)
        else:
            by_measure.setdefault(item.key, []).append(item.normalized(float(value)))
    return {name: float(np.mean(values)) for name, values in by_measure.items()}


def _pearson(x: list[float], y: list[float]) -> float | None:
    if len(x) < MIN_PEOPLE or np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def score_measure(
    truth: Mapping[str, float], retest: Mapping[str, float], guesses: Mapping[str, Mapping[str, float]]
) -> dict[str, Any]:
    """One measure across people: the retest's correlation and error, and each condition's, with the
    correlation normalized by the retest's (people scored where they have both waves and an answer)."""
    both = sorted(p for p in truth if p in retest)
    out: dict[str, Any] = {
        "people": len(both),
        "retest_r": _pearson([retest[p] for p in both], [truth[p] for p in both]),
        "retest_mae": float(np.mean([abs(retest[p] - truth[p]) for p in both])) if both else None,
        "conditions": {},
    }
    for condition, values in sorted(guesses.items()):
        people = [p for p in both if p in values]
        r = _pearson([values[p] for p in people], [truth[p] for p in people])
        gaps = [values[p] - truth[p] for p in people]
        out["conditions"][condition] = {
            "people": len(people),
            "r": r,
            "normalized_r": r / out["retest_r"] if r is not None and out["retest_r"] else None,
            "mae": float(np.mean(np.abs(gaps))) if people else None,
            # The condition's mean less the people's: on a game, below 0 is nearer the self-interested choice
            # (0: nothing given, sent, returned or contributed; defecting) than the people chose.
            "shift": float(np.mean(gaps)) if people else None,
            "shift_interval": bootstrap_interval(gaps) if len(gaps) > 1 else None,
        }
    return out


def score_traits(
    instruments: Sequence[Instrument],
    own: Mapping[str, Mapping[int, Mapping[str, float | None]]],
    rows: Sequence[TraitRow],
) -> dict[str, Any]:
    """Every measure of every instrument: ``own`` is person → wave → ``instrument:item`` → answer."""
    out: dict[str, Any] = {}
    for instrument in instruments:
        prefix = instrument.key + ":"

        def of(answers: Mapping[str, float | None], prefix: str = prefix) -> dict[str, float | None]:
            return {k[len(prefix) :]: v for k, v in answers.items() if k.startswith(prefix)}

        first = {p: measures(instrument, of(waves.get(1, {}))) for p, waves in own.items()}
        second = {p: measures(instrument, of(waves.get(2, {}))) for p, waves in own.items()}
        answered: dict[str, dict[str, dict[str, float | None]]] = {}
        for row in rows:
            if row.instrument == instrument.key:
                answered.setdefault(row.condition, {}).setdefault(row.person, {})[row.item] = row.value
        agents = {c: {p: measures(instrument, a) for p, a in people.items()} for c, people in answered.items()}
        names = sorted({name for values in first.values() for name in values})
        results = {}
        for name in names:
            truth = {p: v[name] for p, v in first.items() if name in v}
            guesses = {c: {p: v[name] for p, v in people.items() if name in v} for c, people in agents.items()}
            # The baseline: everyone else's mean in the first survey (leave one out).
            guesses[POPULATION_MEAN] = {
                p: float(np.mean([v for q, v in truth.items() if q != p])) for p in truth if len(truth) > 1
            }
            results[name] = score_measure(truth, {p: v[name] for p, v in second.items() if name in v}, guesses)
        out[instrument.key] = results
    return out


def game_sentences(traits: Mapping[str, Any]) -> list[str]:
    """Hyper-rationality in plain sentences: per game and condition, how much nearer the self-interested
    choice (0) the condition's choices lie than the people's own, with its interval."""
    out = []
    for game, found in traits.get("games", {}).items():
        for condition, got in found["conditions"].items():
            if got.get("shift") is None:
                continue
            interval = got["shift_interval"]
            ci = f" [{-interval[1]:.2f}, {-interval[0]:.2f}]" if interval else ""
            out.append(f"{condition}: in the {game} game its choices lie {-got['shift']:+.2f}{ci} nearer the "
                       f"self-interested choice than the people's own on the 0–1 scale (above 0: hyper-rational; "
                       f"mean distance from each person's choice {got['mae']:.2f}).")  # fmt: skip
    return out
