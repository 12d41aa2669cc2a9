"""A run's figures: each experiment's effect per condition and blinding, beside the people's, with the
balance checks and the blinded-versus-unblinded comparison; then across experiments, the correlation of
the agents' effects with the people's and how much the agents inflate them."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from agentbank.restricted.experiments import load_experiment
from agentbank.restricted.experiments.analysis import Effect, correlation, differ
from agentbank.restricted.experiments.effects import balance, effect
from agentbank.restricted.experiments.model import Blinding, Experiment
from evaluation.experiments.runs import TrialRow


def summarize(
    rows: Sequence[TrialRow], experiments: Sequence[str], conditions: Sequence[str], blindings: Sequence[str]
) -> dict[str, Any]:
    """Every figure of the report, as plain data (``summary.json``)."""
    summary: dict[str, Any] = {"experiments": [], "overall": [], "warnings": []}
    effects: dict[tuple[str, str, str], Effect | None] = {}
    for key in experiments:
        experiment = load_experiment(key)
        entry: dict[str, Any] = {
            "key": key,
            "title": experiment.title,
            "citation": experiment.citation,
            "version": experiment.version,
            "human": asdict(experiment.human),
            "results": [],
        }
        for condition in conditions:
            for blinding in blindings:
                trials = [r for r in rows if (r.experiment, r.condition, r.blinding) == (key, condition, blinding)]
                found = _result(experiment, trials, condition, blinding, summary["warnings"])
                effects[(key, condition, blinding)] = found.pop("_effect")
                entry["results"].append(found)
            unblinded, blinded = (effects.get((key, condition, b.value)) for b in Blinding)
            if unblinded is not None and blinded is not None:
                differs = differ(unblinded, blinded)
                entry.setdefault("blinding_differs", {})[condition] = differs
                if differs:
                    summary["warnings"].append(
                        f"{key} ({condition}): the blinded and unblinded estimates differ "
                        "beyond their intervals; the effect depends on telling agents the design"
                    )
        summary["experiments"].append(entry)
    for condition in conditions:
        for blinding in blindings:
            summary["overall"].append(_overall(experiments, effects, condition, blinding))
    return summary


def _result(
    experiment: Experiment, trials: Sequence[TrialRow], condition: str, blinding: str, warnings: list[str]
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "condition": condition,
        "blinding": blinding,
        "agents": len(trials),
        "excluded": sum(not t.available for t in trials),
        "_effect": None,
    }
    try:
        estimated = effect(experiment, trials)
    except ValueError as exc:  # too few agents answered in an arm
        found["error"] = str(exc)
        return found
    found["_effect"] = estimated
    found["effect"] = {**asdict(estimated), "significant": estimated.significant}
    human = experiment.human
    found["same_conclusion"] = _same_conclusion(estimated, human.d, human.significant)
    if human.comparable and estimated.d is not None and human.significant and human.d:
        found["inflation"] = estimated.d / human.d
    found["balance"] = []
    for check in balance(experiment, trials):
        found["balance"].append(
            {
                "probe": check.probe,
                "arm": check.arm,
                "reference": check.reference,
                "d": check.effect.d,
                "d_low": check.effect.d_low,
                "d_high": check.effect.d_high,
                "p": check.effect.p,
                "flagged": check.flagged,
            }
        )
        if check.flagged:
            warnings.append(
                f"{experiment.key} ({condition}, {blinding}): the arms differ on the probe "
                f"{check.probe} ({check.arm} against {check.reference}), which the design left unstated"
            )
    return found


def _same_conclusion(estimated: Effect, human_d: float, human_significant: bool) -> bool | None:
    """Whether the agents reach the people's conclusion: an effect in the same direction, or none."""
    if estimated.p is None:
        return None
    if not human_significant:
        return not estimated.significant
    return estimated.significant and estimated.estimate * human_d > 0


def _overall(
    experiments: Sequence[str], effects: dict[tuple[str, str, str], Effect | None], condition: str, blinding: str
) -> dict[str, Any]:
    agents_d, humans_d, ratios, same = [], [], [], []
    alike = 0  # experiments where the agents of each arm all answered alike: no d, no test
    for key in experiments:
        found, human = effects.get((key, condition, blinding)), load_experiment(key).human
        if found is None or found.d is None:
            alike += found is not None
            continue
        same.append(_same_conclusion(found, human.d, human.significant))
        if human.comparable:
            agents_d.append(found.d)
            humans_d.append(human.d)
            if human.significant and human.d:
                ratios.append(found.d / human.d)
    return {
        "condition": condition,
        "blinding": blinding,
        "experiments": len(same),
        "same_conclusion": sum(bool(s) for s in same),
        "r_with_people": correlation(agents_d, humans_d),
        "compared": len(agents_d),
        "median_inflation": statistics.median(ratios) if ratios else None,
        "no_variation": alike,
    }
