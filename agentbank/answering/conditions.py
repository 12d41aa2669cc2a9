"""What an agent knows when it answers: its interview, or one of the paper's comparison conditions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from agentbank.errors import AgentBankError
from agentbank.instruments.model import Instrument

CONDITIONS = ("interview", "ablated", "demographic", "persona", "survey")

# The demographics a demographic agent states, in this order (GSS mnemonics).
DEMOGRAPHIC_KEYS = ("age", "sex", "race", "hispanic", "region", "degree", "marital", "wrkstat", "relig")
DEMOGRAPHIC_ATTITUDES = ("polviews", "partyid")


class InvalidConditionError(AgentBankError):
    """A condition that is unknown or lacks what it needs."""

    code = "invalid_condition"
    status_code = 422


@dataclass(frozen=True)
class Condition:
    """The condition of an answer.

    - ``interview``: the transcript (or passages of it) and the chosen expert's reflections;
    - ``ablated``: the transcript with a seeded random ``fraction`` of turns removed, no reflections
      (they were written from the whole interview);
    - ``demographic``: a first-person line of demographics (Argyle et al.; Park et al.);
    - ``persona``: a short paragraph about the person, written at build time;
    - ``survey``: the person's own answers to other items (``answers``: item key → code).
    """

    name: str = "interview"
    fraction: float | None = None
    seed: int = 0
    answers: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name not in CONDITIONS:
            raise InvalidConditionError(
                f"unknown condition {self.name!r}", hint=f"choose one of {', '.join(CONDITIONS)}"
            )
        if self.name == "ablated" and (self.fraction is None or not 0 <= self.fraction <= 1):
            raise InvalidConditionError("the ablated condition needs a fraction of turns to remove, between 0 and 1")
        if self.name == "survey" and not self.answers:
            raise InvalidConditionError("the survey condition needs the person's answers to other items")

    def holding_out(self, keys: set[str]) -> Condition:
        """The survey condition without the person's answers to ``keys`` (other conditions unchanged)."""
        if self.name != "survey":
            return self
        wanted = {k.lower() for k in keys}
        return replace(self, answers={k: v for k, v in self.answers.items() if k.lower() not in wanted})

    def params(self) -> dict[str, Any]:
        """The parameters that change the answer, canonical for the cache key."""
        if self.name == "ablated":
            return {"fraction": self.fraction, "seed": self.seed}
        if self.name == "survey":
            return {"answers": {k.lower(): int(v) for k, v in sorted(self.answers.items())}}
        return {}


def demographic_line(demographics: Mapping[str, Any], gss: Instrument) -> str:
    """A first-person line from GSS-coded demographics, e.g. 'I am 45 years old, female, ...'."""
    parts = []
    for key in (*DEMOGRAPHIC_KEYS, *DEMOGRAPHIC_ATTITUDES, "occupation"):
        if key not in demographics:
            continue
        value = demographics[key]
        if key == "age":
            parts.append(f"{value} years old")
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
