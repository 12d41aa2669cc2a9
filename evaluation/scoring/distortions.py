"""The known distortions of digital twins (Peng, Toubia et al. 2025), measured per condition beside the
people's own retest, each with a 95% bootstrap interval over people and a plain sentence:

- **correlation**: per item, across people, of the condition's answers with the people's (``spread``);
- **spread**: per item, the condition's variance across people over the people's (below 1: too little
  individuation);
- **stereotyping**: the share of the condition's answers equal to the person's demographic cell mode, less
  the share of the people's own answers equal to it (above 0: answering as the cell rather than the person);
- **ideological shift**: on items whose answers follow the people's own ideology, the condition's answer
  less the person's on a 0–1 scale turned so that 1 is the conservative end, by the people's ideology.

"retest" is the people's own second answers scored the same way: what a person's own noise gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from agentbank.instruments.model import Instrument
from agentbank.publication.breakdowns import BREAKDOWNS
from evaluation.runs.records import ResultRow
from evaluation.scoring import metrics
from evaluation.scoring.spread import across_items, item_data

RETEST = "retest"
CELL_MODE = "cell-mode"
# An item has a liberal–conservative direction where its answers correlate with the people's own
# ideology (polviews, 1 extremely liberal … 7 extremely conservative) at least this much.
MIN_DIRECTION = 0.1
MIN_DIRECTION_PEOPLE = 10
IDEOLOGIES = ("liberal", "moderate", "conservative")


def measure_distortions(
    rows: Sequence[ResultRow], instrument: Instrument, demographics: Mapping[str, Mapping[str, int]],
    *, seed: int = 0, resamples: int = 1000, min_direction_people: int = MIN_DIRECTION_PEOPLE,
) -> dict[str, dict[str, Any]]:  # fmt: skip
    """condition (and ``retest``) → its distortions, from rows that carry the people's own answers."""
    complete = [r for r in rows if r.predicted is not None and r.actual is not None]
    by_condition: dict[str, list[ResultRow]] = {}
    for row in complete:
        by_condition.setdefault(row.condition, []).append(row)
    first = {(r.person, r.item): r for r in complete}
    retest = [replace(r, condition=RETEST, predicted=r.retest) for r in first.values() if r.retest is not None]
    if retest:
        by_condition[RETEST] = retest
    cells = {(r.person, r.item): r.predicted for r in by_condition.get(CELL_MODE, [])}
    direction = directions(complete, instrument, demographics, min_direction_people)
    out = {}
    for name, mine in by_condition.items():
        people = sorted({r.person for r in mine})
        index = {p: i for i, p in enumerate(people)}
        pairs: dict[str, list[tuple[int, int, int]]] = {}
        for r in mine:
            pairs.setdefault(r.item, []).append((index[r.person], r.predicted, r.actual))  # type: ignore[arg-type]
        data = [d for item, ps in sorted(pairs.items()) if (d := item_data(instrument.item(item), ps)) is not None]
        figures = across_items(data, len(people), resamples=resamples, seed=seed) or {}
        out[name] = {
            "people": len(people),
            "items": figures.get("items", 0),
            "correlation": figures.get("correlation"),
            "spread": figures.get("spread"),
            "stereotyping": stereotyping(mine, cells, seed=seed) if cells else None,
            "ideology": ideological_shift(mine, instrument, demographics, direction, seed=seed),
        }
    return out


def stereotyping(rows: Sequence[ResultRow], cells: Mapping[tuple[str, str], int | None], *, seed: int = 0) -> Any:
    """Per person, the share of the condition's answers equal to their cell mode less the share of their own
    answers equal to it; the mean over people with its interval, and both shares."""
    theirs: dict[str, list[tuple[bool, bool]]] = {}
    for r in rows:
        cell = cells.get((r.person, r.item))
        if cell is not None and r.predicted is not None and r.actual is not None:
            theirs.setdefault(r.person, []).append((r.predicted == cell, r.actual == cell))
    if not theirs:
        return None
    agents = np.array([np.mean([a for a, _ in v]) for v in theirs.values()])
    people = np.array([np.mean([b for _, b in v]) for v in theirs.values()])
    shares = {"agents": float(agents.mean()), "people_share": float(people.mean())}
    return {**_with_interval(agents - people, seed), **shares}


def directions(
    rows: Sequence[ResultRow], instrument: Instrument, demographics: Mapping[str, Mapping[str, int]], least: int
) -> dict[str, float]:
    """Items with a liberal–conservative direction: item → +1 where higher codes go with a conservative
    ideology, −1 where they go with a liberal one (ordinal and two-option items only)."""
    first = {(r.person, r.item): r.actual for r in rows if r.actual is not None}
    by_item: dict[str, tuple[list[float], list[float]]] = {}
    for (person, key), code in first.items():
        item, ideology = instrument.item(key), demographics.get(person, {}).get("polviews")
        if ideology is None or code not in item.codes or not (item.kind == "ordinal" or len(item.codes) == 2):
            continue
        xs, ys = by_item.setdefault(key, ([], []))
        xs.append(metrics.ordinal_scale(code, item.codes))
        ys.append(float(ideology))
    out = {}
    for key, (xs, ys) in by_item.items():
        if len(xs) >= least and np.std(xs) > 0 and np.std(ys) > 0:
            r = float(np.corrcoef(xs, ys)[0, 1])
            if abs(r) >= MIN_DIRECTION:
                out[key] = 1.0 if r > 0 else -1.0
    return out


def ideological_shift(
    rows: Sequence[ResultRow], instrument: Instrument, demographics: Mapping[str, Mapping[str, int]],
    direction: Mapping[str, float], *, seed: int = 0,
) -> Any:  # fmt: skip
    """Per person, the mean over directional items of the condition's answer less their own (0–1, 1 the
    conservative end); over everyone and by the people's own ideology, each with its interval."""
    shifts: dict[str, list[float]] = {}
    for r in rows:
        sign = direction.get(r.item)
        codes = instrument.item(r.item).codes
        if sign is None or r.predicted not in codes or r.actual not in codes:
            continue
        gap = metrics.ordinal_scale(r.predicted, codes) - metrics.ordinal_scale(r.actual, codes)  # type: ignore[arg-type]
        shifts.setdefault(r.person, []).append(sign * gap)
    if not shifts:
        return None
    per_person = {p: float(np.mean(v)) for p, v in shifts.items()}
    groups = {}
    for group in IDEOLOGIES:
        values = [v for p, v in per_person.items() if BREAKDOWNS["ideology"].classify(demographics.get(p, {})) == group]
        groups[group] = {**_with_interval(np.array(values), seed), "people": len(values)} if values else None
    return {**_with_interval(np.array(list(per_person.values())), seed), "items": sorted(direction),
            "by_ideology": groups}  # fmt: skip


def _with_interval(values: np.ndarray, seed: int) -> dict[str, Any]:
    interval = metrics.bootstrap_interval(values, seed=seed) if len(values) > 1 else None
    return {"value": float(np.mean(values)), "interval": interval}


def sentences(name: str, found: Mapping[str, Any]) -> list[str]:
    """Each distortion of one condition in a plain sentence."""
    out = []
    if (r := found.get("correlation")) is not None:
        out.append(f"{name}: its answers correlate with the people's at r = {r['value']:.2f}{_ci(r)} on an item, "
                   "on average across people (1 is every person placed as they place themselves).")  # fmt: skip
    if (s := found.get("spread")) is not None:
        low, high = s["interval"] or (s["value"], s["value"])
        verdict = "less individuated than" if high < 1 else "more varied than" if low > 1 else "within its interval of"
        out.append(f"{name}: its answers vary across people {s['value']:.2f}{_ci(s)} times as much as the people's "
                   f"own: {verdict} the people (below 1 is too little individuation).")  # fmt: skip
    if (t := found.get("stereotyping")) is not None:
        out.append(f"{name}: the demographic cell's most common answer matches {t['agents']:.0%} of its answers and "
                   f"{t['people_share']:.0%} of the people's: {_points(t['value'])}{_ci(t, 100)} points "
                   "of stereotyping (0 is as much as the people themselves).")  # fmt: skip
    if (i := found.get("ideology")) is not None:
        side = "conservative" if i["value"] > 0 else "liberal"
        groups = "; ".join(f"{g} people {v['value']:+.3f}{_ci(v)}" for g, v in i["by_ideology"].items() if v)
        out.append(f"{name}: on {len(i['items'])} items with a liberal–conservative direction its answers lie "
                   f"{abs(i['value']):.3f}{_ci(i)} toward the {side} end of the people's own on a 0–1 scale"
                   + (f" ({groups})." if groups else "."))  # fmt: skip
    return out


def _ci(figure: Mapping[str, Any], scale: float = 1.0) -> str:
    interval = figure.get("interval")
    if not interval:
        return ""
    return f" [{interval[0] * scale:.2f}, {interval[1] * scale:.2f}]" if scale == 1.0 else (
        f" [{interval[0] * scale:+.0f}, {interval[1] * scale:+.0f}]")  # fmt: skip


def _points(value: float) -> str:
    return f"{value * 100:+.0f}"
