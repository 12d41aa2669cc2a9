"""Fidelity of aggregates: how far a distribution of an item's answers lies from the population's.

Two distances between distributions over an item's codes: total variation (half the sum of absolute
differences in shares: the largest share of people any one answer is over- or under-stated by) and the
Jensen–Shannon divergence (scipy's Jensen–Shannon distance, squared, in bits: 0 identical, 1 disjoint).

The population is the GSS's own distribution of the item in its newest year with counts in the reference
codebook (``gss/gss_core_items.json`` under the reference data: 2022, unweighted response counts, since the
codebook carries no weights), over the item's options only (don't know, no answer, inapplicable and
skipped are left out, as agents are never offered them). On the open tier the distance is computed from
a release's published noisy table and this public reference alone, so it adds nothing to what the release
discloses and spends none of its budget; its interval draws both distributions again at their counts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy.spatial.distance import jensenshannon

from agentbank.instruments.gss import load_gss
from agentbank.instruments.model import Item
from agentbank.open_tier.distributions import Distribution

REFERENCE_FILE = Path("gss") / "gss_core_items.json"
REFERENCE_YEAR = 2022
REFERENCE = f"GSS {REFERENCE_YEAR} (the codebook's response counts, unweighted)"
RESAMPLES = 1000


def total_variation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Half the sum of absolute differences of two distributions (along their last axis)."""
    return 0.5 * np.abs(_normalized(p) - _normalized(q)).sum(axis=-1)  # type: ignore[no-any-return]


def jensen_shannon(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Jensen–Shannon divergence in bits (scipy's distance, squared), along the last axis; NaN where
    either distribution is empty."""
    a, b = _normalized(p), _normalized(q)
    empty = (a.sum(axis=-1) == 0) | (b.sum(axis=-1) == 0)
    filled = np.where(empty[..., None], 1.0, a), np.where(empty[..., None], 1.0, b)
    return np.where(empty, np.nan, np.square(jensenshannon(*filled, base=2, axis=-1)))  # type: ignore[no-any-return]


def _normalized(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, float), 0.0, None)
    total = p.sum(axis=-1, keepdims=True)
    return np.divide(p, total, out=np.zeros_like(p), where=total > 0)


@cache
def _reference(path: Path) -> dict[str, dict[str, int]]:
    entries = json.loads(path.read_text())
    return {e["variable"]: e.get(f"counts_{REFERENCE_YEAR}") or {} for e in entries}


def reference_counts(reference_dir: Path, item: Item) -> dict[int, int] | None:
    """The GSS's response counts of ``item`` in the reference year by code (its options only), or None
    where the reference data or the item's counts are missing."""
    path = reference_dir / REFERENCE_FILE
    if not path.is_file():
        return None
    counts = _reference(path).get(item.key)
    if not counts:
        return None
    by_label = {label.lower(): n for label, n in counts.items()}
    found = {o.code: int(by_label.get(o.label.lower(), 0)) for o in item.options}
    return found if sum(found.values()) else None


def distances(p: Mapping[int, float], q: Mapping[int, float], codes: list[int]) -> dict[str, float]:
    """Total variation and Jensen–Shannon divergence of two distributions given by code."""
    a, b = np.array([p.get(c, 0.0) for c in codes]), np.array([q.get(c, 0.0) for c in codes])
    return {"tvd": float(total_variation(a, b)), "jsd": float(jensen_shannon(a, b))}


def drawn_fidelity(
    shares: Mapping[int, float], n: float, counts: Mapping[int, int], *, seed: int = 0, resamples: int = RESAMPLES
) -> dict[str, Any]:
    """Both distances of a published distribution (``shares`` over ``n`` people) from reference ``counts``,
    each with a 95% interval from drawing both again at their counts (multinomially)."""
    codes = sorted(set(shares) | set(counts))
    p = _normalized(np.array([shares.get(c, 0.0) for c in codes]))
    q = _normalized(np.array([float(counts.get(c, 0)) for c in codes]))
    rng = np.random.default_rng(seed)
    drawn_p = rng.multinomial(max(round(n), 1), p, size=resamples)
    drawn_q = rng.multinomial(int(sum(counts.values())), q, size=resamples)
    out: dict[str, Any] = {"against": REFERENCE, "people": round(n), "reference_people": int(sum(counts.values()))}
    for name, measure in (("tvd", total_variation), ("jsd", jensen_shannon)):
        values = measure(drawn_p, drawn_q)
        out[name] = round(float(measure(p, q)), 4)
        out[f"{name}_interval"] = (round(float(np.percentile(values, 2.5)), 4),
                                   round(float(np.percentile(values, 97.5)), 4))  # fmt: skip
    return out


def item_fidelity(distribution: Distribution, reference_dir: Path) -> dict[str, Any] | None:
    """An item's fidelity on the open tier: its release's overall table (weighted shares where the release is
    weighted, its design effect shrinking the draws' size) beside the reference; None where the reference
    lacks the item or the table is hidden. Computed from the published table alone, under its noise."""
    if distribution.instrument != "gss" or distribution.breakdowns or not distribution.groups:
        return None
    n, deff = distribution.groups[0]["n"], distribution.groups[0].get("deff")
    counts = reference_counts(reference_dir, load_gss().item(distribution.item))
    if n is None or not n or counts is None:
        return None
    weighted = all(c.weighted_share is not None for c in distribution.cells)
    shares = {c.code: float((c.weighted_share if weighted else c.share) or 0.0) for c in distribution.cells}
    if not sum(shares.values()):
        return None  # every noisy count read as none: no distribution to compare
    drawn = drawn_fidelity(shares, n / (deff or 1.0) if weighted else n, counts, seed=distribution.release)
    return {**drawn, "people": n, "weighted": weighted, "release": distribution.release}
