"""What an agent in one arm reads: each step of the trial as an instrument, blinded or not.

Unblinded, the agent is told it takes part in a study, with every arm described and its own named, as
an LLM experiment that writes its design into the prompt does. Blinded, the agent reads only its own
arm's text, as a person in a between-subjects study would (Gui & Toubia 2025): no study, no other arm.
The probes are asked in a step of their own after the first stimulus, without the agent's answers, so
what they measure is what the arm's text alone makes the agent assume.
"""

from __future__ import annotations

from agentbank.consultation.answering.trials import TrialStep
from agentbank.instruments.model import Instrument
from agentbank.restricted.experiments.model import Arm, Blinding, Experiment

STUDY_INTRO = (
    "You are taking part in a research study. Each participant is randomly assigned to one of {n} versions "
    "of it:\n{versions}\nYou have been assigned to this version: {summary}"
)
PROBE_INTRO = "Before you go on, a few questions about the situation you just read about. Give your best guess."


def trial_steps(experiment: Experiment, arm: Arm, blinding: Blinding) -> list[TrialStep]:
    """The steps of ``arm``'s trial, then the probe step (when the experiment has probes)."""
    steps = []
    for number, (stimulus, items) in enumerate(zip(arm.stimuli, experiment.steps, strict=True)):
        text = stimulus
        if number == 0 and blinding is Blinding.UNBLINDED:
            text = f"{_study(experiment, arm)}\n\n{stimulus}"
        steps.append(TrialStep(_instrument(experiment, number, text), items))
    if experiment.probes:
        first = steps[0].instrument.preamble
        probe = _instrument(experiment, len(steps), f"{first}\n\n{PROBE_INTRO}")
        steps.append(TrialStep(probe, experiment.probes, after_earlier=False))
    return steps


def _study(experiment: Experiment, arm: Arm) -> str:
    versions = "\n".join(f"- {other.summary}" for other in experiment.arms)
    return STUDY_INTRO.format(n=len(experiment.arms), versions=versions, summary=arm.summary)


def _instrument(experiment: Experiment, number: int, preamble: str) -> Instrument:
    title = experiment.step_titles[number] if number < len(experiment.step_titles) else f"Part {number + 1}"
    # One key per experiment: each arm's, blinding's and step's text is a version of it, and the text's
    # version is part of every answer's cache key (``answering.trials``).
    source = f"{experiment.citation} (rewritten in the bank's own words)"
    items = experiment.probes if number >= len(experiment.steps) else experiment.steps[number]
    return Instrument(f"exp.{experiment.key}", title, preamble, source, items)
