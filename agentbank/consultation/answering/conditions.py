"""What an agent knows when it answers: its interview, or one of the paper's comparison conditions.

Each condition is a named unit in a registry (as an evaluation framework registers its solvers): it
says what it needs (interview turns, the bank's own agent), what it shows the model, which of the
asked items it must hold out, and which of its parameters change an answer. The answering engine and
the evaluation look conditions up here; neither knows any condition by name.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from agentbank.building.memory import ablate, render_turn
from agentbank.building.transcripts import TurnText
from agentbank.consultation.answering.portraits import (
    DEMOGRAPHIC_ATTITUDES,
    DEMOGRAPHIC_KEYS,
    demographic_line,
    survey_block,
)
from agentbank.core.errors import AgentBankError
from agentbank.instruments.model import Instrument
from agentbank.keys.crypto import Cipher

__all__ = ["CONDITIONS", "DEMOGRAPHIC_ATTITUDES", "DEMOGRAPHIC_KEYS", "Condition", "ConditionUnit", "Sources",
           "demographic_line", "survey_block", "unit_of"]  # fmt: skip


class InvalidConditionError(AgentBankError):
    """A condition that is unknown or lacks what it needs."""

    code = "invalid_condition"
    status_code = 422


@dataclass(frozen=True)
class Sources:
    """What a condition may draw on for one agent; each callable reads (and decrypts) only when asked.

    ``turns`` gives the interview's turns and ``fit`` chooses those that fit the memory budget (by
    retrieval when the whole interview does not); ``notes`` gives an expert's reflections.
    """

    demographics: Mapping[str, Any]
    instrument: Instrument
    gss: Instrument
    turns: Callable[[], list[TurnText]]
    fit: Callable[[list[TurnText]], list[TurnText]]
    notes: Callable[[str], tuple[str, list[str]]]
    persona: Callable[[], str]


@dataclass(frozen=True)
class Section:
    """A condition's part of the prompt, and the interview turns it shows (for citations)."""

    text: str
    shown_turns: tuple[int, ...] = ()


class ConditionUnit:
    """One condition: its name, what it needs and what it shows. Subclasses register themselves."""

    name: ClassVar[str]
    shows_turns: ClassVar[bool] = False  # open questions need turns to cite
    uses_experts: ClassVar[bool] = False  # items grouped by expert, the expert's notes shown
    bank_agent: ClassVar[bool] = False  # needs an agent built from a real interview (not a respondent)

    def check(self, condition: Condition) -> None:
        """Raise ``InvalidConditionError`` when ``condition`` lacks a parameter this unit needs."""

    def hold_out(self, condition: Condition, keys: frozenset[str]) -> Condition:
        """``condition`` with everything about ``keys`` (asked items) removed from what it shows."""
        return replace(condition, withheld=condition.withheld | keys)

    def params(self, condition: Condition) -> dict[str, Any]:
        """The parameters that change the answer, canonical for the cache key."""
        return {}

    def section(self, condition: Condition, sources: Sources, expert: str | None) -> Section:
        """What the model is shown about the person under this condition."""
        raise NotImplementedError


_REGISTRY: dict[str, ConditionUnit] = {}


def register(cls: type[ConditionUnit]) -> type[ConditionUnit]:
    """Add a condition to the registry under its name (a class decorator)."""
    _REGISTRY[cls.name] = cls()
    return cls


def unit_of(name: str) -> ConditionUnit:
    """The registered condition called ``name``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InvalidConditionError(
            f"unknown condition {name!r}", hint=f"choose one of {', '.join(_REGISTRY)}"
        ) from None


@dataclass(frozen=True)
class Condition:
    """A condition with its parameters: ``fraction`` and ``seed`` (ablated), ``answers`` (survey: item
    key → code), and ``withheld``, the item keys its context must never state (the items asked)."""

    name: str = "interview"
    fraction: float | None = None
    seed: int = 0
    answers: Mapping[str, int] = field(default_factory=dict)
    withheld: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "withheld", frozenset(k.lower() for k in self.withheld))
        self.unit.check(self)

    @property
    def unit(self) -> ConditionUnit:
        """The registered unit that builds this condition's context."""
        return unit_of(self.name)

    def holding_out(self, keys: set[str] | frozenset[str]) -> Condition:
        """This condition with nothing about ``keys`` left in what it shows."""
        return self.unit.hold_out(self, frozenset(k.lower() for k in keys))

    def params(self) -> dict[str, Any]:
        """The parameters that change the answer, canonical for the cache key."""
        return self.unit.params(self)

    def recorded(self, cipher: Cipher) -> dict[str, Any]:
        """The parameters as stored beside an answer and hashed into its cache key: a person's own answers
        (the survey condition) only as a digest keyed with their data key, so neither the record nor the
        key says what they answered, and both mean nothing once the key is destroyed."""
        params = self.params()
        if "answers" in params:
            shown = json.dumps(params["answers"], sort_keys=True, separators=(",", ":"))
            params = {**params, "answers": cipher.digest("condition-answers", shown)}
        return params


@register
class Interview(ConditionUnit):
    """The transcript (or the passages of it that fit) and the chosen expert's reflections."""

    name = "interview"
    shows_turns = uses_experts = bank_agent = True

    def section(self, condition: Condition, sources: Sources, expert: str | None) -> Section:
        selected = sources.fit(sources.turns())
        text = _interview_text(selected)
        if expert is not None:
            title, notes = sources.notes(expert)
            text += f"\n\n## Notes by {title}\n" + "\n".join(f"- {n}" for n in notes)
        return Section(text, tuple(t.position for t in selected))


@register
class Ablated(ConditionUnit):
    """The transcript with a seeded random ``fraction`` of turns removed, and no reflections (they
    were written from the whole interview)."""

    name = "ablated"
    shows_turns = bank_agent = True

    def check(self, condition: Condition) -> None:
        if condition.fraction is None or not 0 <= condition.fraction <= 1:
            raise InvalidConditionError("the ablated condition needs a fraction of turns to remove, between 0 and 1")

    def params(self, condition: Condition) -> dict[str, Any]:
        return {"fraction": condition.fraction, "seed": condition.seed}

    def section(self, condition: Condition, sources: Sources, expert: str | None) -> Section:
        selected = sources.fit(ablate(sources.turns(), condition.fraction or 0.0, condition.seed))
        return Section(_interview_text(selected), tuple(t.position for t in selected))


@register
class Demographic(ConditionUnit):
    """A first-person line of demographics (Argyle et al.; Park et al.), without any asked item."""

    name = "demographic"
    STATED = frozenset((*DEMOGRAPHIC_KEYS, *DEMOGRAPHIC_ATTITUDES, "occupation"))

    def params(self, condition: Condition) -> dict[str, Any]:
        # Only what the line would have stated changes it, so other conditions' keys stay as they were.
        hidden = sorted(condition.withheld & self.STATED)
        return {"withheld": hidden} if hidden else {}

    def section(self, condition: Condition, sources: Sources, expert: str | None) -> Section:
        line = demographic_line(sources.demographics, sources.gss, condition.withheld)
        return Section("## About this person\n" + line)


@register
class Persona(ConditionUnit):
    """A short paragraph about the person, written at build time from the interview."""

    name = "persona"
    bank_agent = True

    def section(self, condition: Condition, sources: Sources, expert: str | None) -> Section:
        return Section("## This person in their own words\n" + sources.persona())


@register
class Survey(ConditionUnit):
    """The person's own answers to other items; an asked item's answer is never among them."""

    name = "survey"

    def check(self, condition: Condition) -> None:
        if not condition.answers:
            raise InvalidConditionError("the survey condition needs the person's answers to other items")

    def hold_out(self, condition: Condition, keys: frozenset[str]) -> Condition:
        kept = {k: v for k, v in condition.answers.items() if k.lower() not in keys}
        return replace(condition, answers=kept, withheld=condition.withheld | keys)

    def params(self, condition: Condition) -> dict[str, Any]:
        return {"answers": {k.lower(): int(v) for k, v in sorted(condition.answers.items())}}

    def section(self, condition: Condition, sources: Sources, expert: str | None) -> Section:
        shown = {k: v for k, v in condition.answers.items() if k.lower() not in condition.withheld}
        return Section("## This person's answers to other questions\n" + survey_block(shown, sources.instrument))


@register
class InterviewSurvey(Survey):
    """The interview (or the passages of it that fit) and the person's own answers to other items: Park et
    al.'s best condition. No expert's reflections, so its items are asked in the survey condition's calls
    (the asked item's topic held out call by call). An agent without an interview (a survey respondent)
    is shown its answers alone, under the survey condition's heading: the survey condition's prompt shape.
    """

    name = "interview-survey"
    shows_turns = True

    def section(self, condition: Condition, sources: Sources, expert: str | None) -> Section:
        survey = super().section(condition, sources, expert)
        selected = sources.fit(sources.turns())
        if not selected:
            return survey
        return Section(_interview_text(selected) + "\n\n" + survey.text, tuple(t.position for t in selected))


def _interview_text(turns: list[TurnText]) -> str:
    return "## Interview (numbered turns)\n" + "\n".join(render_turn(t) for t in turns)


CONDITIONS = tuple(_REGISTRY)
