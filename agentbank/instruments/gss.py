"""The General Social Survey instrument: Core items by mnemonic, with exact wording and GSS codes."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from agentbank.instruments.model import Instrument, Item, Option

PREAMBLE = (
    "The questions below come from the General Social Survey, a long-running survey of adults in the "
    "United States. Answer each one as yourself, choosing the option that fits you best."
)

# Labels that break an ordering: volunteered answers, named alternatives, "other" and the like.
NOMINAL_MARKERS = (
    "refused",
    "depends",
    "vote",
    "obama",
    "romney",
    "word of god",
    " law",
    "respondent does",
    "no religion",
    "no children",
    "no class",
    "leaving labor force",
    "(vol",
)


def fill_scale(options: tuple[Option, ...]) -> tuple[Option, ...]:
    """Scales whose codebook labels only some points (``1 - top | 10 - bottom``) get every code between.

    Without this an agent could only answer the labelled ends of a ten-point scale.
    """
    codes = [o.code for o in options]
    if len(codes) < 2 or codes != sorted(codes) or codes[-1] - codes[0] + 1 == len(codes):
        return options
    if codes[-1] - codes[0] > 30:
        return options
    labels = {o.code: o.label for o in options}
    return tuple(Option(c, labels.get(c, str(c))) for c in range(codes[0], codes[-1] + 1))


def item_kind(options: list[Option]) -> str:
    """Ordinal when three or more options form a scale; categorical otherwise."""
    if len(options) < 3:
        return "categorical"
    labels = [o.label.lower() for o in options]
    if any(marker in label for label in labels for marker in NOMINAL_MARKERS):
        return "categorical"
    if any(label.startswith("other") for label in labels):  # "other", "other party" (not "the other")
        return "categorical"
    return "ordinal"


@cache
def load_gss() -> Instrument:
    """The GSS Core instrument (155 attitude, 18 behavior and 114 demographic items), read once."""
    raw = json.loads(resources.files("agentbank.instruments").joinpath("data/gss_core.json").read_text())
    items = []
    for entry in raw["items"]:
        options = fill_scale(tuple(Option(int(o["code"]), o["label"]) for o in entry["options"]))
        items.append(
            Item(
                key=entry["variable"],
                kind=item_kind(list(options)),  # type: ignore[arg-type]
                question=entry["question"],
                options=options,
                meta={
                    "gss_kind": entry["kind"],
                    "description": entry["description"],
                    "topic": entry.get("topic", entry["variable"]),
                    **({"expert": "demographer"} if entry["kind"] == "demographic" else {}),
                },
            )
        )
    return Instrument("gss", "General Social Survey (Core)", PREAMBLE, raw["source"], tuple(items))


def survey_items(instrument: Instrument) -> list[Item]:
    """The attitude and behavior items that make up the GSS survey of an agent."""
    return [item for item in instrument.items if item.meta.get("gss_kind") in ("attitude", "behavior")]
