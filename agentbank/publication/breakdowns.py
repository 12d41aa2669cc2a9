"""The pre-declared breakdowns of the open tier, from participants' GSS-coded demographics.

A release stores each member's category in every breakdown, in the order of ``BREAKDOWNS``; a
breakdown added later shows from the next release on (each release names its own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

UNKNOWN = "unknown"
# A table cell's figures after its group, code and label, as the downloads and the Python client name
# them (here, beside the breakdowns, so the client reads the open tier's vocabulary without its machinery).
FIGURES = (
    "count",
    "share",
    "share_low",
    "share_high",
    "weighted_share",
    "weighted_low",
    "weighted_high",
    "deff",
    "noise_low",
    "noise_high",
    "sampling_low",
    "sampling_high",
)


@dataclass(frozen=True)
class Breakdown:
    """A way to split the population: fixed categories, and how a participant falls into one."""

    key: str
    categories: tuple[str, ...]
    classify: Callable[[Mapping[str, Any]], str]
    title: str = ""  # as a person reads it ("Age", "Labour-force status")


def _coded(field: str, labels: Mapping[int, str]) -> Callable[[Mapping[str, Any]], str]:
    def classify(demographics: Mapping[str, Any]) -> str:
        try:
            return labels.get(int(demographics[field]), UNKNOWN)
        except (KeyError, TypeError, ValueError):
            return UNKNOWN

    return classify


def _age_band(demographics: Mapping[str, Any]) -> str:
    try:
        age = int(demographics["age"])
    except (KeyError, TypeError, ValueError):
        return UNKNOWN
    if age < 18:
        return UNKNOWN
    return "18-29" if age < 30 else "30-44" if age < 45 else "45-64" if age < 65 else "65+"


_PARTY = {0: "democrat", 1: "democrat", 2: "democrat", 3: "independent", 4: "republican", 5: "republican",
          6: "republican", 7: "other"}  # fmt: skip
_HISPANIC = {1: "not hispanic", 2: "hispanic", 3: "hispanic", 4: "hispanic", 5: "hispanic"}  # GSS HISPANIC
_MARITAL = {1: "married", 2: "widowed", 3: "divorced", 4: "separated", 5: "never married"}
# WRKSTAT in the groups labour statistics use: employed (at work or not), unemployed, and out of the labour force.
_LABOUR = {1: "employed", 2: "employed", 3: "employed", 4: "unemployed", 5: "retired", 6: "in school",
           7: "keeping house", 8: "other"}  # fmt: skip
_CLASS = {1: "lower", 2: "working", 3: "middle", 4: "upper", 5: "no class"}
_HEALTH = {1: "excellent", 2: "good", 3: "fair", 4: "poor"}
_IDEOLOGY = {1: "liberal", 2: "liberal", 3: "liberal", 4: "moderate", 5: "conservative", 6: "conservative",
             7: "conservative"}  # fmt: skip

BREAKDOWNS: dict[str, Breakdown] = {
    b.key: b
    for b in (
        Breakdown("sex", ("male", "female", UNKNOWN), _coded("sex", {1: "male", 2: "female"}), title="Sex"),
        Breakdown("age_band", ("18-29", "30-44", "45-64", "65+", UNKNOWN), _age_band, title="Age"),
        Breakdown(
            "race",
            ("white", "black", "other", UNKNOWN),
            _coded("race", {1: "white", 2: "black", 3: "other"}),
            title="Race",
        ),
        Breakdown(
            "education",
            ("less than high school", "high school", "junior college", "bachelor", "graduate", UNKNOWN),
            _coded(
                "degree",
                {0: "less than high school", 1: "high school", 2: "junior college", 3: "bachelor", 4: "graduate"},
            ),
            title="Education",
        ),
        Breakdown(
            "region",
            ("northeast", "midwest", "south", "west", UNKNOWN),
            _coded("region", {1: "northeast", 2: "midwest", 3: "south", 4: "west"}),
            title="Region",
        ),
        Breakdown(
            "party",
            ("democrat", "independent", "republican", "other", UNKNOWN),
            _coded("partyid", _PARTY),
            title="Party",
        ),
        Breakdown(
            "ideology",
            ("liberal", "moderate", "conservative", UNKNOWN),
            _coded("polviews", _IDEOLOGY),
            title="Ideology",
        ),
        Breakdown(
            "hispanic", ("not hispanic", "hispanic", UNKNOWN), _coded("hispanic", _HISPANIC), title="Hispanic origin"
        ),
        Breakdown("marital", (*_MARITAL.values(), UNKNOWN), _coded("marital", _MARITAL), title="Marital status"),
        Breakdown(
            "labour_force",
            (*dict.fromkeys(_LABOUR.values()), UNKNOWN),
            _coded("wrkstat", _LABOUR),
            title="Labour-force status",
        ),
        Breakdown("class", (*_CLASS.values(), UNKNOWN), _coded("class", _CLASS), title="Subjective class"),
        Breakdown("health", (*_HEALTH.values(), UNKNOWN), _coded("health", _HEALTH), title="Health"),
    )
}
