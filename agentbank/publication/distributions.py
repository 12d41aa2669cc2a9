"""Tables of the open tier as a reader sees them: shares and intervals from a release's protected counts.

A stored table holds noisy counts per group and code (``protection``). A group is shown when its count,
noise included, reaches both ``k`` and three times the noise of a group's count (so that an empty group
is almost never shown, one in a thousand); a smaller group is hidden whole and says why. Shares are counts over the
group's count (negative noisy counts read as none), and every interval is the sampling error and the
protection's noise together, so a reader never takes the noise for a finding. Nothing here reads the
database.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from agentbank.core.errors import InvalidRequestError, NotFoundError
from agentbank.instruments.model import Instrument, Item
from agentbank.publication.breakdowns import BREAKDOWNS
from agentbank.publication.protection import MAX_BREAKDOWNS

DIMENSIONS = tuple(BREAKDOWNS)  # a new release's tables are cut by these, in this order
Z95 = 1.959963984540054
TOO_FEW = "too few people in this group to show beside the release's noise (fewer than k, or than 3 noise units)"
SHOWN_AT = 3.0  # a group's count must reach this many standard deviations of its noise to be shown
DEMO_NOTE = ("cut under the demo's settings, for a bank of fictional people only: a smaller k and a far larger mu "
             "than a real bank's, so the demo's few people show at all; they protect almost nothing")  # fmt: skip


@dataclass(frozen=True)
class Cell:
    """One group's count of agents giving ``code`` (with the release's noise), its share and 95% interval,
    unweighted and weighted (all hidden with the group)."""

    group: dict[str, str]
    code: int
    label: str
    count: int | None
    share: float | None
    interval: tuple[float, float] | None = None  # sampling and the release's noise together
    weighted_share: float | None = None
    weighted_interval: tuple[float, float] | None = None
    noise_interval: tuple[float, float] | None = None  # the release's noise alone
    sampling_interval: tuple[float, float] | None = None  # sampling alone (as if the counts were exact)


@dataclass(frozen=True)
class Distribution:
    """An item's distribution over one release's agents, overall or by breakdowns."""

    release: int
    instrument: str
    item: str
    question: str
    breakdowns: list[str]
    k: int
    total: int | None
    groups: list[dict[str, Any]]
    cells: list[Cell]
    # Release members with no coded answer to the item; agents are never offered "don't know".
    missing: dict[str, int | None]
    weights: dict[str, Any] | None
    protection: dict[str, Any]


def item_codes(item: Item) -> list[tuple[int, str]]:
    """The codes an item's answers take: its options, or whole numbers within its bounds."""
    if item.options:
        return [(o.code, o.label) for o in item.options]
    if item.kind == "numeric" and item.minimum is not None and item.maximum is not None:
        return [(v, str(v)) for v in range(int(item.minimum), int(item.maximum) + 1)]
    raise InvalidRequestError(f"item {item.key} has no fixed answers to count")


def checked_request(instrument: Instrument, item_key: str, breakdowns: list[str]) -> tuple[Item, tuple[str, ...]]:
    """The item and the breakdowns (in canonical order) of a table request, or a clear error."""
    try:
        item = instrument.item(item_key)
    except KeyError:
        raise NotFoundError(f"{instrument.key} has no item {item_key!r}") from None
    unknown = [d for d in breakdowns if d not in BREAKDOWNS]
    if unknown:
        raise InvalidRequestError(f"unknown breakdown {unknown[0]!r}; choose among {', '.join(BREAKDOWNS)}")
    dims = tuple(dict.fromkeys(breakdowns))
    if len(dims) > MAX_BREAKDOWNS:
        raise InvalidRequestError(f"at most {MAX_BREAKDOWNS} breakdowns at once")
    item_codes(item)
    return item, dims


def as_distribution(
    release: int, instrument: Instrument, item: Item, dims: tuple[str, ...], k: int, body: dict[str, Any],
    overall: dict[str, Any], *, members: int | None, weights: dict[str, Any] | None, mu: float,
    demo_settings: bool = False,
) -> Distribution:  # fmt: skip
    """The stored table ``body`` as the API shows it, with ``overall`` (the item's overall table) for its total;
    ``demo_settings``: the release was cut under the demo's settings, which the protection says."""
    labels = dict(item_codes(item))
    codes = list(body["codes"])
    sigma, sigma_w = float(body["sigma"]), body.get("sigma_weighted")
    deff = (weights or {}).get("deff") if sigma_w is not None else None
    stored = {(tuple(row[0]), row[1]): row[2:] for row in body["cells"]}
    measured = body.get("measured")  # the noisy counts as measured (releases cut before consistency: none)
    groups, cells = [], []
    for g, group in enumerate(itertools.product(*(BREAKDOWNS[d].categories for d in dims))):
        named = dict(zip(dims, group, strict=True))
        # Unbiased: an empty group's measured sum is centred on zero (its consistent counts are not).
        raw = (sum(measured[g * len(codes) : (g + 1) * len(codes)]) if measured is not None
               else sum(stored[(group, c)][0] for c in codes))  # fmt: skip
        counts = [max(stored[(group, c)][0], 0) for c in codes]
        shown = raw >= max(k, SHOWN_AT * sigma * math.sqrt(len(codes)))
        groups.append({"group": named, "n": max(raw, 0) if shown else None, "deff": deff if shown else None,
                       "hidden": None if shown else TOO_FEW})  # fmt: skip
        totals = [max(stored[(group, c)][1], 0.0) for c in codes] if sigma_w is not None else None
        for i, code in enumerate(codes):
            if not shown:
                cells.append(Cell(named, code, labels.get(code, str(code)), None, None))
                continue
            share, interval = _share(counts, i, sigma, 1.0)
            w_share, w_interval = (None, None)
            if totals is not None and sigma_w is not None:
                w_share, w_interval = _share(totals, i, float(sigma_w), deff or 1.0)
            _, noise_only = _share(counts, i, sigma, 0.0)
            _, sampling_only = _share(counts, i, 0.0, 1.0)
            cells.append(Cell(named, code, labels.get(code, str(code)), counts[i], share, interval, w_share,
                              w_interval, noise_only, sampling_only))  # fmt: skip
    total = sum(max(row[2], 0) for row in overall["cells"])
    missing = {"no answer": max(members - total, 0) if members is not None else None}
    note = "counts carry the release's noise; intervals include it"
    if demo_settings:
        note += f"; {DEMO_NOTE}"
    protection = {"mu": mu, "sigma": sigma, "sigma_weighted": sigma_w, "note": note,
                  "demo_settings": demo_settings}  # fmt: skip
    return Distribution(release, instrument.key, item.key, item.question, list(dims), k, total, groups, cells,
                        missing, weights, protection)  # fmt: skip


def _share(values: list[float] | list[int], i: int, sigma: float, deff: float) -> tuple[float, tuple[float, float]]:
    """A share of a group and its 95% interval: sampling (times the design effect) and noise together.

    The noise part is the delta method on share = v_i / (v_i + rest), each value with noise ``sigma``.
    """
    n = float(sum(values))
    if n <= 0:
        return 0.0, (0.0, 1.0)
    p = values[i] / n
    rest = n - values[i]
    noise = (rest**2 * sigma**2 + values[i] ** 2 * (len(values) - 1) * sigma**2) / n**4
    half = Z95 * math.sqrt(p * (1 - p) * deff / n + noise)
    return round(p, 4), (round(max(0.0, p - half), 4), round(min(1.0, p + half), 4))
