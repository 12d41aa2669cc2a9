"""An experiment as a versioned definition: arms, steps, outcomes, probes, design and analysis.

An arm is what one group of participants reads; a step is one screen of a trial (its stimulus and the
questions asked after it), so a multi-step design (a power manipulation, then a trust game) is a list of
steps, each arm with its own text for each step. Probe items ask about what the design left unstated,
to check that the arms differ only in what they were meant to (Gui & Toubia 2025). The human
reference figures travel with the definition, so a run's report sets the agents' effects beside them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from agentbank.instruments.model import Item


class Design(StrEnum):
    """Who sees which arms: one arm per person, or every arm for every person (in a seeded order)."""

    BETWEEN = "between"
    WITHIN = "within"


class AnalysisKind(StrEnum):
    """The comparison the original study reported, and so the test the analysis runs."""

    PROPORTIONS = "proportions"  # a binary choice in two arms: difference in proportions, χ²
    MEANS = "means"  # a rating or amount in two arms: difference in means, t-test
    INTERACTION = "interaction"  # a 2×2 design: the difference of differences, its t (F with 1 df)


class Blinding(StrEnum):
    """Whether the agent is told it is in a study whose other arms are described (Gui & Toubia 2025)."""

    UNBLINDED = "unblinded"
    BLINDED = "blinded"


@dataclass(frozen=True)
class Arm:
    """One group: its name, a one-line summary (shown to unblinded agents with the other arms'), its
    text for each step, and its level of each factor in a 2×2 design."""

    key: str
    summary: str
    stimuli: tuple[str, ...]
    levels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Analysis:
    """The effect to estimate: of ``treatment`` over ``control`` on ``outcome`` (proportions, means); or,
    for an interaction, of factor ``factors[0]`` at ``treatment`` minus at ``control`` of factor
    ``factors[1]``, each factor's levels given high first in ``levels``. ``success`` is the code counted
    as a success for proportions."""

    kind: AnalysisKind
    outcome: str
    treatment: str = ""
    control: str = ""
    factors: tuple[str, str] | None = None
    levels: dict[str, tuple[str, str]] = field(default_factory=dict)
    success: int | None = None


@dataclass(frozen=True)
class HumanReference:
    """What people did in the replication the agents are compared with, and what Park et al.'s agents did.

    ``comparable`` is False where the printed figure is not a Cohen's d (it is then shown, never used in
    a correlation or an inflation ratio)."""

    d: float
    significant: bool
    source: str
    agents_d: dict[str, float] = field(default_factory=dict)  # Park et al.'s GPT-4o agents, by condition
    n: int | None = None
    comparable: bool = True
    note: str = ""


@dataclass(frozen=True)
class Experiment:
    """A published experiment, rewritten in the bank's own words; its ``version`` is a hash of all of it."""

    key: str
    title: str
    citation: str
    design: Design
    arms: tuple[Arm, ...]
    steps: tuple[tuple[Item, ...], ...]  # the questions after each step's stimulus
    analysis: Analysis
    probes: tuple[Item, ...]
    human: HumanReference
    step_titles: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.key) > 20 or not self.key.replace("_", "").isalnum():
            raise ValueError("an experiment's key is at most 20 letters, digits or underscores")
        if any(len(arm.stimuli) != len(self.steps) for arm in self.arms):
            raise ValueError(f"{self.key}: every arm needs a stimulus for each step")
        if self.analysis.outcome not in {item.key for item in self.outcomes}:
            raise ValueError(f"{self.key}: the analysis names an outcome no step asks")

    @property
    def outcomes(self) -> tuple[Item, ...]:
        """Every question of every step, in order."""
        return tuple(item for step in self.steps for item in step)

    @property
    def per_agent(self) -> int:
        """Answers one agent gives: each step's questions and the probes, in each arm it takes."""
        arms = len(self.arms) if self.design is Design.WITHIN else 1
        return arms * (len(self.outcomes) + len(self.probes))

    def arm(self, key: str) -> Arm:
        """The arm called ``key``."""
        for arm in self.arms:
            if arm.key == key:
                return arm
        raise KeyError(key)

    @property
    def version(self) -> str:
        """A hash of everything that changes what an agent reads or how the effect is computed."""
        content = [self.key, [asdict(a) for a in self.arms], [[i.version for i in s] for s in self.steps],
                   [p.version for p in self.probes], asdict(self.analysis), self.design, self.step_titles]  # fmt: skip
        return hashlib.sha256(json.dumps(content, default=str).encode()).hexdigest()[:12]
