"""Fidelity of aggregates: how far a distribution of an item's answers lies from the population's.

Two distances between distributions over an item's codes: total variation (half the sum of absolute
differences in shares: the largest share of people any one answer is over- or under-stated by) and the
Jensen–Shannon divergence (scipy's Jensen–Shannon distance, squared, in bits: 0 identical, 1 disjoint).

The population is the GSS's own distribution of the item in 2022 (the newest year with counts in the GSS
codebook: unweighted response counts, since the codebook carries no weights), over the item's options only
(don't know, no answer, inapplicable and skipped are left out, as agents are never offered them). On the
open tier the distance is computed from a release's published noisy table and this public reference alone,
so it adds nothing to what the release discloses and spends none of its budget; its interval draws both
distributions again at their counts.

Where the counts come from: the package ships them (``data/gss_reference_2022.json``: every item of the
bank's GSS instrument, with source, licence and a sha256 of the counts, checked when the file is first
read, so a damaged file raises ``ReferenceDataError`` instead of skewing every figure; rebuilt by
``scripts/extract_gss_reference.py``), so the figures need nothing beside the repository. Only an item that
file does not name at all (one added to an instrument since, or another instrument's) is looked up in the
larger codebook extract under the reference data (``gss/gss_core_items.json``), where that is present; an
item the file names as having no 2022 counts has none, whatever the reference data hold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.spatial.distance import jensenshannon

from agentbank.core.errors import AgentBankError
from agentbank.instruments.gss import load_gss
from agentbank.instruments.model import Item
from agentbank.publication.distributions import Distribution

REFERENCE_FILE = Path("gss") / "gss_core_items.json"
REFERENCE_YEAR = 2022
REFERENCE = f"GSS {REFERENCE_YEAR} (the codebook's response counts, unweighted)"
RESAMPLES = 1000
SHIPPED_FILE = f"data/gss_reference_{REFERENCE_YEAR}.json"  # inside this package
RESTORE = "restore it from the repository, or rebuild it with scripts/extract_gss_reference.py"


class ReferenceDataError(AgentBankError):
    """The shipped reference counts are missing, unreadable or fail their checksum."""

    code = "reference_data_error"
    status_code = 500


@dataclass(frozen=True)
class ShippedReference:
    """The shipped file's counts by item and answer label, and the items it names as having none (why)."""

    header: dict[str, Any]
    counts: dict[str, dict[str, int]]
    without_counts: dict[str, str]


def canonical_sha256(counts: Mapping[str, Mapping[str, int]]) -> str:
    """The sha256 of the counts' canonical JSON (keys sorted, no spaces, ASCII), whatever the file's layout."""
    return hashlib.sha256(json.dumps(counts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def read_reference(source: Traversable) -> ShippedReference:
    """A reference counts file, once the sha256 of its counts matches its header's."""
    try:
        raw = json.loads(source.read_text(encoding="utf-8"))
        header, counts, without = dict(raw["header"]), dict(raw["counts"]), dict(raw.get("without_counts", {}))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ReferenceDataError(f"the GSS reference counts cannot be read ({source.name}: {exc})",
                                 hint=RESTORE) from exc  # fmt: skip
    expected, found = header.get("sha256"), canonical_sha256(counts)
    if found != expected:
        raise ReferenceDataError(
            f"the GSS reference counts ({source.name}) fail their checksum: their sha256 is {found[:12]}…, "
            f"the file's header says {str(expected)[:12]}…",
            hint=RESTORE,
        )
    return ShippedReference(header, counts, without)


@cache
def shipped_reference() -> ShippedReference:
    """The reference counts this package ships, read and checked once."""
    return read_reference(resources.files("agentbank.publication").joinpath(SHIPPED_FILE))


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
    where the item's counts are missing. The shipped counts first; ``reference_dir`` only for an item they
    do not name (see the module's docstring)."""
    shipped = shipped_reference()
    if item.key in shipped.counts:
        counts: Mapping[str, int] | None = shipped.counts[item.key]
    elif item.key in shipped.without_counts:
        return None
    else:
        path = reference_dir / REFERENCE_FILE
        counts = _reference(path).get(item.key) if path.is_file() else None
    return counts_by_code(counts or {}, item)


def counts_by_code(counts: Mapping[str, int], item: Item) -> dict[int, int] | None:
    """Counts by answer label (as the codebook spells them, any case) as counts of ``item``'s codes, its
    options only; None where none of its options was counted."""
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
