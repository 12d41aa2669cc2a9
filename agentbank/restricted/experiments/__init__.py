"""Experiments on agents: versioned definitions, seeded assignment, trials through the door, effects.

``published`` holds Park et al.'s five; ``stimuli`` turns an arm into what an agent reads (blinded or
not); ``running`` asks one agent its trial; ``estimates`` and ``analysis`` compute the effect and the
balance checks as the original studies did.
"""

from __future__ import annotations

from agentbank.core.errors import AgentBankError
from agentbank.restricted.experiments.model import Blinding, Design, Experiment
from agentbank.restricted.experiments.published import PUBLISHED

EXPERIMENTS: dict[str, Experiment] = {experiment.key: experiment for experiment in PUBLISHED}


class UnknownExperimentError(AgentBankError):
    """An experiment the bank does not hold."""

    code = "unknown_experiment"
    status_code = 404


def load_experiment(key: str) -> Experiment:
    """The experiment called ``key``."""
    try:
        return EXPERIMENTS[key]
    except KeyError:
        raise UnknownExperimentError(
            f"no experiment called {key!r}", hint=f"choose one of {', '.join(EXPERIMENTS)}"
        ) from None


__all__ = ["EXPERIMENTS", "Blinding", "Design", "Experiment", "UnknownExperimentError", "load_experiment"]
