"""What the comparison conditions say about a person in place of an interview: a demographic line,
or the person's own answers to other items."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from agentbank.instruments.model import Instrument

# The demographics a demographic agent states, in this order (GSS mnemonics).
DEMOGRAPHIC_KEYS = ("age", "sex", "race", "hispanic", "region", "degree", "marital", "wrkstat", "relig")
DEMOGRAPHIC_ATTITUDES = ("polviews", "partyid")
# Demographics that are not items of the GSS instrument, with the words the line uses for their codes.
# ``hispanic`` is kept as yes or no: the GSS's thirty origin codes are folded when data are loaded.
HISPANIC = {1: "not Hispanic", 2: "Hispanic"}


def demographic_line(demographics: Mapping[str, Any], gss: Instrument, withheld: Collection[str] = ()) -> str:
    """A first-person line from GSS-coded demographics, e.g. 'I am 45 years old, female, ...'.

    Keys in ``withheld`` are left out: an item asked of the agent is never stated in its context.
    """
    hidden = {key.lower() for key in withheld}
    parts = []
    for key in (*DEMOGRAPHIC_KEYS, *DEMOGRAPHIC_ATTITUDES, "occupation"):
        if key not in demographics or key in hidden:
            continue
        value = demographics[key]
        if key == "age":
            parts.append(f"{value} years old")
            continue
        if key == "hispanic":
            # An origin code never folded to yes or no says nothing reliable, so it is left out.
            if str(value).strip() in ("1", "2"):
                parts.append(HISPANIC[int(value)])
            continue
        try:
            item = gss.item(key)
            label = item.label(int(value))
            parts.append(f"{item.meta.get('description', key)}: {label}")
        except (KeyError, ValueError, TypeError):
            parts.append(f"{key}: {value}")
    if not parts:
        return "I would rather not say anything about myself."
    return "About me: " + "; ".join(parts) + "."


def survey_block(answers: Mapping[str, int], instrument: Instrument) -> str:
    """The person's answers to other items, one short line each (the codebook's description where
    there is one: a survey of 150 items in full wording would crowd out everything else)."""
    lines = []
    for key, code in sorted(answers.items()):
        try:
            item = instrument.item(key)
            lines.append(f"- {item.meta.get('description') or item.question}: {item.label(int(code))}")
        except KeyError:
            continue
    return "\n".join(lines)
