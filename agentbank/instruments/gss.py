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
    "other",
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


def item_kind(options: list[Option]) -> str:
    """Ordinal when three or more options form a scale; categorical otherwise."""
    if len(options) < 3:
        return "categorical"
    labels = [o.label.lower() for o in options]
    if any(marker in label for label in labels for marker in NOMINAL_MARKERS):
        return "categorical"
    return "ordinal"


@cache
def load_gss() -> Instrument:
    """The GSS Core instrument (155 attitude, 18 behavior and 114 demographic items), read once."""
    raw = json.loads(resources.files("agentbank.instruments").joinpath("data/gss_core.json").read_text())
    items = []
    for entry in raw["items"]:
        options = tuple(Option(int(o["code"]), o["label"]) for o in entry["options"])
        items.append(
            Item(
                key=entry["variable"],
                kind=item_kind(list(options)),  # type: ignore[arg-type]
                question=entry["question"],
                options=options,
                meta={
                    "gss_kind": entry["kind"],
                    "description": entry["description"],
                    **({"expert": "demographer"} if entry["kind"] == "demographic" else {}),
                },
            )
        )
    return Instrument("gss", "General Social Survey (Core)", PREAMBLE, raw["source"], tuple(items))


def survey_items(instrument: Instrument) -> list[Item]:
    """The attitude and behavior items that make up the GSS survey of an agent."""
    return [item for item in instrument.items if item.meta.get("gss_kind") in ("attitude", "behavior")]
