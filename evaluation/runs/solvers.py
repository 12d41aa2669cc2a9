"""The conditions a run compares, as named solvers: the non-LLM baselines, and agents under the
bank's own conditions (looked up in the bank's registry, so the evaluation and the bank never
disagree about what a condition shows).

Every item asked in a run is withheld from every agent condition's context for the whole run (the
demographic line included). The survey conditions (``survey``, ``interview-survey``) are the one
exception by design: they show the person's answers to the run's other items, holding out the asked
item's whole topic call by call (Park et al.), or only items of other topics (``other-topics``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from agentbank.consultation.answering.conditions import Condition, unit_of
from agentbank.instruments.model import Item
from evaluation.runs.baselines import ModeBaseline


@dataclass(frozen=True)
class Trial:
    """One scored person as a solver sees them: their wave-1 demographics and answers, and the run."""

    person: str
    demographics: Mapping[str, int]
    answers: Mapping[str, int]
    items: Sequence[Item]
    context_items: Sequence[str]
    survey_context: str

    @property
    def asked(self) -> frozenset[str]:
        """The keys of every item of the run."""
        return frozenset(item.key for item in self.items)


Call = tuple[Condition, list[Item]]


class Solver:
    """A named way of answering a run's items for one person."""

    name: ClassVar[str]
    uses_model: ClassVar[bool] = True
    derived: ClassVar[bool] = False  # made from the other conditions' answers when the run is scored
    bank_agent: ClassVar[bool] = False  # answered by the bank's own agent of the person, if any

    def guesses(self, baseline: ModeBaseline, trial: Trial) -> dict[str, int | None]:
        """A baseline's answers (only solvers that use no model)."""
        raise NotImplementedError

    def calls(self, trial: Trial) -> list[Call]:
        """The conditions an agent is asked under, each with the items asked under it."""
        raise NotImplementedError


SOLVERS: dict[str, Solver] = {}
# Shares of the interview's turns removed (percent) in the interview-length ablation; 0 is the interview.
ABLATIONS = (20, 40, 60, 80)


def register(cls: type[Solver]) -> type[Solver]:
    """Add a solver to the registry under its name (a class decorator)."""
    SOLVERS[cls.name] = cls()
    return cls


@register
class PopulationMode(Solver):
    """The training set's most common answer to each item."""

    name = "population-mode"
    uses_model = False

    def guesses(self, baseline: ModeBaseline, trial: Trial) -> dict[str, int | None]:
        return {item.key: baseline.population_mode(item.key) for item in trial.items}


@register
class CellMode(Solver):
    """The most common answer in the person's demographic cell (the population's when it is thin)."""

    name = "cell-mode"
    uses_model = False

    def guesses(self, baseline: ModeBaseline, trial: Trial) -> dict[str, int | None]:
        return {item.key: baseline.cell_mode(item.key, trial.demographics) for item in trial.items}


@register
class Combined(Solver):
    """The run's agent answers and baselines combined item by item, the choice fit on other people only
    (``evaluation.scoring.combination``); made when the run is scored, from answers the run already holds."""

    name = "combined"
    uses_model = False
    derived = True


class _Fixed(Solver):
    """An agent condition with one context for the whole run, every asked item withheld from it."""

    def calls(self, trial: Trial) -> list[Call]:
        return [(Condition(self.name, withheld=trial.asked), list(trial.items))]


@register
class InterviewSolver(_Fixed):
    """The bank's own interview agent of the person (only people who gave the bank an interview)."""

    name = "interview"
    bank_agent = unit_of("interview").bank_agent


class _Ablated(Solver):
    """The bank's interview agent with a share of its transcript's turns removed (seeded), for the
    interview-length curve: how much of the interview the agent's accuracy rests on."""

    fraction: ClassVar[float]
    bank_agent = unit_of("ablated").bank_agent

    def calls(self, trial: Trial) -> list[Call]:
        return [(Condition("ablated", fraction=self.fraction, withheld=trial.asked), list(trial.items))]


for _percent in ABLATIONS:
    register(type(f"Ablated{_percent}", (_Ablated,), {"name": f"ablated-{_percent}", "fraction": _percent / 100}))


@register
class PersonaSolver(_Fixed):
    """The bank agent's persona paragraph, written at build time."""

    name = "persona"
    bank_agent = unit_of("persona").bank_agent


@register
class DemographicSolver(_Fixed):
    """A demographic line for every respondent, without any item of the run."""

    name = "demographic"


@register
class SurveySolver(Solver):
    """The person's own answers to other items."""

    name = "survey"
    condition: ClassVar[str] = "survey"  # the bank's condition the calls are made under

    def calls(self, trial: Trial) -> list[Call]:
        shown = dict(trial.answers)
        if trial.survey_context == "other-topics":
            context = {k: shown[k] for k in trial.context_items if k in shown and k not in trial.asked}
            whole = Condition(self.condition, answers=context, withheld=trial.asked)
            return [(whole, list(trial.items))] if context else []
        if trial.survey_context == "items":
            shown = {k: v for k, v in shown.items() if k in trial.asked}
        calls: list[Call] = []
        # Park et al. hold out the target item's whole topic, so that near-duplicate items do not leak it.
        for group in _by_topic(trial.items):
            held = {i.key for i in group}
            others = {k: v for k, v in shown.items() if k not in held}
            if others:  # someone who answered nothing else has no survey-based agent for this topic
                calls.append((Condition(self.condition, answers=others, withheld=frozenset(held)), group))
        return calls


@register
class InterviewSurveySolver(SurveySolver):
    """The interview and the person's own answers to other items, asked as the survey condition is (Park
    et al.'s best condition). A survey respondent has no interview: the survey condition's prompt shape."""

    name = "interview-survey"
    condition = "interview-survey"


def _by_topic(items: Sequence[Item]) -> list[list[Item]]:
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(str(item.meta.get("topic", item.key)), []).append(item)
    return list(groups.values())


BASELINES = tuple(name for name, s in SOLVERS.items() if not s.uses_model and not s.derived)
MODEL_CONDITIONS = tuple(name for name, s in SOLVERS.items() if s.uses_model)
DERIVED = tuple(name for name, s in SOLVERS.items() if s.derived)
CONDITIONS = (*MODEL_CONDITIONS, *BASELINES, *DERIVED)
