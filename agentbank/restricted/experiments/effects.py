"""From trial results to the experiment's effect and its balance checks, as the design says.

Only agents that answered count; a withdrawn agent's trial is left out of every figure. The balance
checks compare each arm's answers to the probes with the reference arm's (the analysis's control): the
arms should differ in what the design varied, not in what it left unstated. A probe whose difference has
a 95% interval of d that excludes zero is flagged: the arm's text changed what the agent assumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentbank.restricted.experiments import analysis
from agentbank.restricted.experiments.analysis import Effect
from agentbank.restricted.experiments.model import AnalysisKind, Design, Experiment
from agentbank.restricted.experiments.running import TrialResult


@dataclass(frozen=True)
class Balance:
    """One probe's difference between an arm and the reference arm."""

    probe: str
    arm: str
    reference: str
    effect: Effect

    @property
    def flagged(self) -> bool:
        """The interval of d excludes zero: the arms differ in what the design left unstated."""
        e = self.effect
        return e.d_low is not None and e.d_high is not None and (e.d_low > 0 or e.d_high < 0)


def effect(experiment: Experiment, results: Sequence[TrialResult]) -> Effect:
    """The experiment's effect over the agents that answered."""
    spec, answered = experiment.analysis, [r for r in results if r.available]
    if spec.kind is AnalysisKind.INTERACTION:
        assert spec.factors is not None
        first, second = spec.factors
        cells: dict[tuple[str, str], list[float]] = {}
        for result in answered:
            for arm_key in result.arms:
                levels = experiment.arm(arm_key).levels
                cells.setdefault((levels[first], levels[second]), []).append(result.outcomes[arm_key][spec.outcome])
        return analysis.interaction(cells, spec.levels[first], spec.levels[second])
    treated = _values(answered, spec.treatment, spec.outcome, "outcomes")
    control = _values(answered, spec.control, spec.outcome, "outcomes")
    if spec.kind is AnalysisKind.PROPORTIONS:
        return analysis.proportions([v == spec.success for v in treated], [v == spec.success for v in control])
    if experiment.design is Design.WITHIN:
        return analysis.paired(treated, control)
    return analysis.means(treated, control)


def balance(experiment: Experiment, results: Sequence[TrialResult]) -> list[Balance]:
    """Each probe, each arm against the reference arm (where both have enough answers)."""
    answered = [r for r in results if r.available]
    reference = experiment.analysis.control
    checks = []
    for probe in experiment.probes:
        base = _values(answered, reference, probe.key, "probes")
        for arm in experiment.arms:
            if arm.key == reference:
                continue
            values = _values(answered, arm.key, probe.key, "probes")
            try:
                compared = analysis.paired if experiment.design is Design.WITHIN else analysis.means
                checks.append(Balance(probe.key, arm.key, reference, compared(values, base)))
            except ValueError:  # too few agents in an arm to compare
                continue
    return checks


def _values(results: Sequence[TrialResult], arm: str, key: str, part: str) -> list[Any]:
    return [getattr(r, part)[arm][key] for r in results if arm in getattr(r, part)]
