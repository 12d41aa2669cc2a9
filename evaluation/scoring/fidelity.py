"""Fidelity of a run's aggregates: per item, how far the distribution of a condition's answers lies from the
people's own (their first survey, over the same people, weighted where the data carry weights), and for the
bank's own participants from the GSS's own distribution in the reference year (``agentbank.publication.fidelity``).

Total variation and Jensen–Shannon divergence per item, averaged over items, each with a 95% bootstrap
interval over people (one draw of people for every item). "retest" is the people's own second answers:
how far a distribution moves in the people's own hands between two surveys.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from agentbank.instruments.model import Instrument
from agentbank.publication.fidelity import REFERENCE, jensen_shannon, total_variation
from evaluation.runs.records import ResultRow
from evaluation.scoring.spread import draws

RETEST = "retest"
PEOPLE = "people"  # the people's own first answers, against the reference


def run_fidelity(
    rows: Sequence[ResultRow], instrument: Instrument, weights: Mapping[str, float] | None = None,
    reference: Mapping[str, Mapping[int, int]] | None = None, *, seed: int = 0, resamples: int = 1000,
) -> dict[str, Any]:  # fmt: skip
    """condition → its distances from the people's own distribution; with ``reference`` (item → code → count),
    also every condition's and the people's own distances from it."""
    complete = [r for r in rows if r.predicted is not None and r.actual is not None]
    first = {(r.person, r.item): r for r in complete}
    by_condition: dict[str, list[ResultRow]] = {}
    for row in complete:
        by_condition.setdefault(row.condition, []).append(row)
    retest = [replace(r, condition=RETEST, predicted=r.retest) for r in first.values() if r.retest is not None]
    if retest:
        by_condition[RETEST] = retest
    out: dict[str, Any] = {
        "weights": "the data's weights" if weights else None,
        "against_people": {
            name: _fidelity(mine, instrument, weights, None, seed, resamples) for name, mine in by_condition.items()
        },
    }
    if reference:
        people = [replace(r, condition=PEOPLE, predicted=r.actual) for r in first.values()]
        named = {**by_condition, PEOPLE: people}
        named.pop(RETEST, None)
        out["reference"] = REFERENCE
        out["against_reference"] = {n: _fidelity(m, instrument, weights, reference, seed, resamples)
                                    for n, m in named.items()}  # fmt: skip
    return out


def _fidelity(
    rows: Sequence[ResultRow], instrument: Instrument, weights: Mapping[str, float] | None,
    reference: Mapping[str, Mapping[int, int]] | None, seed: int, resamples: int,
) -> dict[str, Any] | None:  # fmt: skip
    people = sorted({r.person for r in rows})
    index = {p: i for i, p in enumerate(people)}
    # Each draw's count of a person, times their weight: a resampled, weighted population.
    drawn = draws(len(people), resamples, seed) * np.array([(weights or {}).get(p, 1.0) for p in people])
    by_item: dict[str, list[ResultRow]] = {}
    for row in rows:
        by_item.setdefault(row.item, []).append(row)
    tvd, jsd, items = [], [], []
    rng = np.random.default_rng(seed + 1)
    for key, mine in sorted(by_item.items()):
        codes = instrument.item(key).codes
        usable = [r for r in mine if r.predicted in codes and r.actual in codes]
        if not usable:
            continue
        w = drawn[:, [index[r.person] for r in usable]]
        p = w @ _one_hot([r.predicted for r in usable], codes)  # type: ignore[misc]
        if reference is None:
            q = w @ _one_hot([r.actual for r in usable], codes)  # type: ignore[misc]
        else:
            counts = reference.get(key)
            if not counts:
                continue
            fixed = np.array([float(counts.get(c, 0)) for c in codes])
            q = np.vstack([fixed, rng.multinomial(int(fixed.sum()), fixed / fixed.sum(), size=resamples)])
        # A draw without anybody who answered the item has no distribution of it: left out of that draw.
        drawn_here = p.sum(axis=1) > 0
        tvd.append(np.where(drawn_here, total_variation(p, q), np.nan))
        jsd.append(np.where(drawn_here, jensen_shannon(p, q), np.nan))
        items.append(key)
    if not items:
        return None
    with warnings.catch_warnings():  # a draw in which nobody answered any item reads as NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        mean_tvd, mean_jsd = np.nanmean(tvd, axis=0), np.nanmean(jsd, axis=0)
    return {
        "items": len(items),
        "tvd": _figure(mean_tvd),
        "jsd": _figure(mean_jsd),
        "item_tvd": {k: round(float(v[0]), 4) for k, v in zip(items, tvd, strict=True)},
        "item_jsd": {k: round(float(v[0]), 4) for k, v in zip(items, jsd, strict=True)},
    }


def _one_hot(codes: Sequence[int], options: list[int]) -> np.ndarray:
    return np.array([[float(c == o) for o in options] for c in codes])


def _figure(values: np.ndarray) -> dict[str, Any]:
    rest = values[1:][~np.isnan(values[1:])]
    interval = (float(np.percentile(rest, 2.5)), float(np.percentile(rest, 97.5))) if len(rest) > 1 else None
    return {"value": float(values[0]), "interval": interval}


def sentences(found: Mapping[str, Any]) -> list[str]:
    """The fidelity of each condition's aggregates in a plain sentence."""
    out = []
    weighted = " (weighted)" if found.get("weights") else ""
    for name, f in found.get("against_people", {}).items():
        if f:
            out.append(f"{name}: its distribution of an item's answers is {_share(f['tvd'])} away from the people's "
                       f"own{weighted} on average over {f['items']} items (total variation; Jensen–Shannon "
                       f"{f['jsd']['value']:.3f}{_ci(f['jsd'])} bits).")  # fmt: skip
    for name, f in found.get("against_reference", {}).items():
        if f:
            out.append(f"{name}: {_share(f['tvd'])} away from {found.get('reference')} on average over "
                       f"{f['items']} items (total variation; Jensen–Shannon {f['jsd']['value']:.3f}{_ci(f['jsd'])} "
                       "bits).")  # fmt: skip
    return out


def _share(figure: Mapping[str, Any]) -> str:
    interval = figure.get("interval")
    text = f"{figure['value'] * 100:.1f} points"
    return text + (f" [{interval[0] * 100:.1f}, {interval[1] * 100:.1f}]" if interval else "")


def _ci(figure: Mapping[str, Any]) -> str:
    interval = figure.get("interval")
    return f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""
