"""One agent's trial through the door: its arms' steps, then its answers sorted by arm and question."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from agentbank.consultation.answering import Condition
from agentbank.consultation.answering.costs import Estimator
from agentbank.consultation.door import AgentDoor, Grant, Then
from agentbank.restricted.experiments.model import Blinding, Experiment
from agentbank.restricted.experiments.stimuli import trial_steps


@dataclass(frozen=True)
class TrialResult:
    """What one agent answered in its arms (``outcomes`` and ``probes``: arm → question → value), or
    that it was not available (withdrawn or out of scope since the run began: left out of every figure)."""

    agent_id: str
    arms: tuple[str, ...]
    blinding: str
    condition: str
    available: bool = True
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)
    cached: bool = False
    seconds: float = 0.0
    tokens: int = 0


def run_trial(
    door: AgentDoor,
    sessions: sessionmaker[Session],
    grant: Grant,
    experiment: Experiment,
    agent_id: uuid.UUID,
    arms: tuple[str, ...],
    blinding: Blinding,
    condition: Condition,
    *,
    seed: int = 0,
    reasons: bool = True,
    then: Then | None = None,
) -> TrialResult:
    """Ask the agent its arms (in order, one trial: a within-subject agent sees its first arm before the
    second) and sort the answers. The door's refusals pass through (an agent withdrawn, a grant lapsed)."""
    steps = [step for arm in arms for step in trial_steps(experiment, experiment.arm(arm), blinding)]
    details = {
        "experiment": experiment.key,
        "experiment_version": experiment.version,
        "arms": list(arms),
        "blinding": blinding.value,
    }
    consultation = door.trial(
        sessions, grant, agent_id, steps, condition, details=details, then=then, seed=seed, reasons=reasons
    )
    answers = iter(consultation.answers)  # in the steps' order: each arm's questions, then its probes
    outcomes: dict[str, dict[str, Any]] = {}
    probes: dict[str, dict[str, Any]] = {}
    for arm in arms:
        outcomes[arm] = {item.key: next(answers).value for item in experiment.outcomes}
        if experiment.probes:
            probes[arm] = {item.key: next(answers).value for item in experiment.probes}
    made = consultation.answers
    return TrialResult(
        str(agent_id), arms, blinding.value, condition.name, True, outcomes, probes,
        cached=all(a.cached for a in made), seconds=round(sum(a.seconds for a in made), 2),
        tokens=sum(a.usage.prompt_tokens + a.usage.completion_tokens for a in made),
    )  # fmt: skip


# What an estimate of a trial leaves out (``planned_trial``).
EXPERIMENT_NOTE = "an experiment's later steps are counted without the earlier steps' answers they show"


def estimate_trial(
    estimator: Estimator,
    door: AgentDoor,
    sessions: sessionmaker[Session],
    grant: Grant,
    experiment: Experiment,
    agent_id: uuid.UUID,
    arms: tuple[str, ...],
    blinding: Blinding,
    condition: Condition,
    *,
    seed: int = 0,
    reasons: bool = True,
) -> None:
    """Add the model calls the agent's trial would make to ``estimator``; nothing asked or released. A step
    after the first shows the earlier steps' answers, which are not made yet: it is planned without them,
    so its prompt is counted short by their length, and an answer already stored is not recognised."""
    for arm in arms:
        for step in trial_steps(experiment, experiment.arm(arm), blinding):
            calls = door.planned_calls(sessions, grant, agent_id, step.instrument, step.items, condition,
                                       earlier=[], seed=seed, reasons=reasons)  # fmt: skip
            estimator.add(calls, len(step.items))
