"""What an evaluation of the bank's own agents would cost before it runs (``agentbank evaluate --dry-run``).

The people, items and conditions are the run's own (``service.prepare``); each model condition's calls for
each person not yet scored are planned through the bank's door as ``execute`` would make them, so a run
already begun is estimated for what it still lacks. Nothing is asked, written or audited. The Big Five
and games the bank's run also asks (``--traits``) are not counted; other datasets' agents are built in
the evaluation database as the run goes, so there is nothing to plan before it: refused.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from agentbank.consultation.answering.costs import Estimate, Estimator
from agentbank.consultation.door import AgentDoor, Grant
from agentbank.core.prompts.files import prompt_version
from agentbank.core.settings import Settings
from agentbank.db.connections import transaction
from agentbank.keys.crypto import KeyRing
from agentbank.providers.tokens import counter_of
from evaluation.people.bank import BANK, BankSealer
from evaluation.runs.execute import bank_agent_of
from evaluation.runs.plan import TARGET_WAVE
from evaluation.runs.records import RunConfig, RunError, RunStore
from evaluation.runs.solvers import SOLVERS, Trial
from evaluation.service import prepare

TRAITS_NOTE = "the Big Five and games a run of the bank also asks (--traits) are not counted"


def estimate_evaluation(
    config: RunConfig, settings: Settings, root: Path, door: AgentDoor, sessions: sessionmaker[Session], keys: KeyRing
) -> Estimate:
    """The calls, tokens, price and time the run of ``config`` still needs, planned with ``door``."""
    if config.dataset != BANK:
        raise RunError(
            "a dry run estimates evaluations of the bank's own agents (--dataset bank) only",
            hint="other datasets' agents are built as the run goes, so there is nothing to plan yet",
        )
    instrument, dataset, plan = prepare(config, (sessions, keys))
    store = RunStore(root, config.run_id(dataset.digest, door.chat.name, prompt_version()), BankSealer(sessions, keys))
    done = {(r.person, r.condition) for r in store.rows()} if store.exists() else set()
    target = dataset.answers(TARGET_WAVE)
    items = [instrument.item(k) for k in plan.items]
    options = {"items_per_call": config.items_per_call, "seed": config.answer_seed, "reasons": config.reasons}
    grant = Grant.evaluation(store.path.name)
    with transaction(sessions) as session:
        estimator = Estimator(session, settings, door.chat.name, counter_of(door.chat))
    asked = [SOLVERS[name] for name in config.conditions if SOLVERS[name].uses_model]
    for person in plan.people:
        trial = Trial(person, dataset.demographics.get(person, {}), target.get(person, {}), items, plan.context,
                      config.survey_context)  # fmt: skip
        with sessions() as session:
            linked = bank_agent_of(session, person)
        if linked is None:
            continue
        for solver in (s for s in asked if (person, s.name) not in done):
            for condition, questions in solver.calls(trial):
                calls = door.planned_calls(sessions, grant, linked[0].id, instrument, questions, condition, **options)
                estimator.add(calls, len(questions))
    estimate = estimator.finish()
    if config.traits:
        estimate.notes.append(TRAITS_NOTE)
    return estimate
