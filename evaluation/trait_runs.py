"""Asking the bank's agents the survey's other instruments (Big Five, games) in a run of the bank's own
participants: each model condition of the run, person by person, through the door to the person's own
agent; resumable like the rest of the run (answers already written are not asked again)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from agentbank.consultation.answering.conditions import Condition
from agentbank.consultation.door import Grant
from agentbank.instruments.model import Instrument
from evaluation.people.waves import Dataset
from evaluation.runs.execute import Models, Progress, bank_agent_of
from evaluation.runs.plan import TARGET_WAVE
from evaluation.runs.records import RunConfig, RunStore
from evaluation.runs.solvers import SOLVERS, Call, SurveySolver, Trial
from evaluation.scoring.traits import TraitRow, append_rows, read_rows


def execute_traits(
    store: RunStore, run_id: str, config: RunConfig, dataset: Dataset, instruments: Sequence[Instrument],
    models: Models, bank: sessionmaker[Session], progress: Progress | None = None,
) -> None:  # fmt: skip
    """Ask every bank agent of the dataset each instrument under each model condition of the run."""
    done = {(r.person, r.condition, r.instrument) for r in read_rows(store.path, store.sealer)}
    asked = [SOLVERS[name] for name in config.conditions if SOLVERS[name].uses_model]
    target = dataset.answers(TARGET_WAVE)
    options: dict[str, Any] = {"items_per_call": config.items_per_call, "seed": config.answer_seed,
                               "reasons": config.reasons}  # fmt: skip
    people = sorted(dataset.battery)
    for n, person in enumerate(people, start=1):
        with bank() as session:
            linked = bank_agent_of(session, person)
        if linked is None:
            continue
        agent_id = linked[0].id
        for solver in asked:
            for instrument in instruments:
                if (person, solver.name, instrument.key) in done:
                    continue
                trial = Trial(person, dataset.demographics.get(person, {}), target.get(person, {}),
                              instrument.items, (), "all")  # fmt: skip
                rows = [
                    TraitRow(person, instrument.key, a.target, solver.name, _number(a.value))
                    for condition, items in _calls(solver, trial)
                    for a in models.bank_door.survey(bank, Grant.evaluation(run_id), agent_id, instrument, items,
                                                     condition, **options).answers
                ]  # fmt: skip
                append_rows(store.path, rows, store.sealer)
        if progress:
            progress("Big Five and games", n, len(people))


def _calls(solver: Any, trial: Trial) -> list[Call]:
    """The solver's calls; the survey conditions show the person's GSS answers in one call, since none
    of them is about the asked instrument (no topic to hold out)."""
    if isinstance(solver, SurveySolver):
        if not trial.answers:
            return []
        return [(Condition(solver.condition, answers=dict(trial.answers), withheld=trial.asked), list(trial.items))]
    return list(solver.calls(trial))


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except ValueError:
        return None
