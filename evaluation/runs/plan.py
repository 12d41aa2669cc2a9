"""What a run asks: which items, which people are scored, and which people the baselines learn from."""

from __future__ import annotations

import random
from dataclasses import dataclass

from agentbank.core.errors import AgentBankError
from agentbank.instruments.gss import survey_items
from agentbank.instruments.model import Instrument
from evaluation.people.waves import Dataset

# Waves: agents are scored against wave 1 (as Park et al. score against the first interview),
# and wave 2 is the person's own retest, the ceiling accuracy is normalized by.
TARGET_WAVE = 1
RETEST_WAVE = 2
# Items with more of their answers set aside (not in the codebook) than this are not chosen by
# themselves: scoring the few answers left would describe a different question.
MAX_SET_ASIDE = 0.05


class PlanError(AgentBankError):
    """A run that cannot be planned on this dataset (too few items or people)."""

    code = "invalid_evaluation"
    status_code = 422


@dataclass(frozen=True)
class RunPlan:
    """The items asked, the people scored (the test set) and everyone else (the training set).

    ``context`` are well-answered survey items on topics none of the asked items belong to: a
    survey-based agent shown only these never sees an asked item's topic, and its context is the
    same for every item, so a model's prefix cache covers it after the first call.
    """

    items: tuple[str, ...]
    people: tuple[str, ...]
    training: tuple[str, ...]
    context: tuple[str, ...] = ()
    # Everyone is scored; the baselines for each person are fit on everyone else.
    leave_one_out: bool = False


def plan_run(
    dataset: Dataset, instrument: Instrument, *, n_items: int, sample: int, seed: int, items: tuple[str, ...] = ()
) -> RunPlan:
    """Choose items (given, or the survey items most people answered in both waves) and a seeded sample
    (``sample`` 0: everyone, with leave-one-out baselines, as for the bank's own participants)."""
    target, retest = dataset.answers(TARGET_WAVE), dataset.answers(RETEST_WAVE)
    if items:
        unknown = [k for k in items if k not in dataset.items()]
        if unknown:
            raise PlanError(f"the dataset has no answers to {', '.join(unknown)}")
        chosen = list(items)
    askable = {i.key for i in survey_items(instrument) if i.kind in ("categorical", "ordinal")}
    aside = dataset.set_aside_shares()
    coverage = {
        key: sum(1 for p in target if key in target[p] and key in retest.get(p, {}))
        for key in dataset.items()
        if key in askable and aside[key] <= MAX_SET_ASIDE
    }
    # An item nobody answered in both waves cannot be scored: it is never chosen by itself.
    ranked = sorted((k for k in coverage if coverage[k]), key=lambda k: (-coverage[k], k))
    if not items:
        chosen = ranked[:n_items]
    if len(chosen) < 2:
        raise PlanError("the dataset has fewer than two items answered in both waves")
    both = sorted(
        person
        for person in target
        if sum(1 for k in chosen if k in target[person] and k in retest.get(person, {})) * 2 >= len(chosen)
    )
    if sample == 0:
        if len(both) < 2:
            raise PlanError(f"only {len(both)} people answered at least half of the items in both waves")
        sample = len(both)
    if len(both) < sample:
        raise PlanError(
            f"only {len(both)} people answered at least half of the items in both waves; asked for {sample}",
            hint="lower --sample",
        )
    topics = {instrument.item(k).meta.get("topic", k) for k in chosen}
    context = [k for k in ranked if k not in chosen and instrument.item(k).meta.get("topic", k) not in topics]
    people = sorted(random.Random(seed).sample(both, sample))  # noqa: S311 - a reproducible draw, not a secret
    scored = set(people)
    training = tuple(sorted(p for p in target if p not in scored))
    leave_one_out = not training
    return RunPlan(tuple(chosen), tuple(people), training, tuple(context[: len(chosen)]), leave_one_out)
