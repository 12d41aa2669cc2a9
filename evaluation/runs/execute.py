"""Carrying out a run: the baselines, then each model condition person by person, through the
product's own door to its agents (the same prompts, cache, provenance and audit as the bank's answers).
Which condition shows what is the business of the solvers (``evaluation.runs.solvers``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from agentbank.consultation.answering import AgentAnswer
from agentbank.consultation.door import AgentDoor, Grant
from agentbank.core.prompts.files import prompt_version
from agentbank.core.settings import Settings
from agentbank.db.connections import transaction
from agentbank.db.models import Agent, Participant
from agentbank.instruments.model import Instrument
from agentbank.keys.crypto import KeyRing
from agentbank.providers.chat import ChatModel
from agentbank.providers.embeddings import Embedder
from agentbank.providers.factory import build_chat_model, build_embedder
from agentbank.runtime.bank import open_keyring
from evaluation.people.respondents import respondent_agent
from evaluation.people.waves import Dataset
from evaluation.runs.baselines import ModeBaseline
from evaluation.runs.plan import RETEST_WAVE, TARGET_WAVE, RunPlan
from evaluation.runs.records import ResultRow, RunConfig, RunError, RunRecord, RunStore, timed_segment
from evaluation.runs.solvers import SOLVERS, Solver, Trial

Progress = Callable[[str, int, int], None]  # condition, done, total


@dataclass
class Models:
    """The chat model, embedder and keys the run's agents answer with.

    ``keys`` opens the bank's participants (the interview condition); ``respondent_keys`` the
    evaluation database's respondents, whose keyring is its own so bank withdrawals never touch it.
    """

    chat: ChatModel
    embedder: Embedder
    keys: KeyRing
    memory_token_budget: int
    respondent_keys: KeyRing

    @cached_property
    def bank_door(self) -> AgentDoor:
        """The door to the bank's own agents (the interview condition), audited in the bank."""
        return self._door(self.keys)

    @cached_property
    def respondent_door(self) -> AgentDoor:
        """The door to respondents' agents, audited in the evaluation database."""
        return self._door(self.respondent_keys)

    def _door(self, keys: KeyRing) -> AgentDoor:
        return AgentDoor(
            chat=self.chat, embedder=self.embedder, keys=keys, memory_token_budget=self.memory_token_budget
        )


def models_of(settings: Settings) -> Models:
    """The models and keyrings a run answers with, as the settings choose them. The caller closes the models."""
    return Models(
        build_chat_model(settings),
        build_embedder(settings),
        open_keyring(settings),
        settings.memory_token_budget,
        open_keyring(settings, settings.evaluation_database),
    )


def start_or_resume(
    store: RunStore, run_id: str, config: RunConfig, dataset: Dataset, plan: RunPlan, model: str
) -> RunRecord:
    """The run's record: new, or the one of an interrupted run of the same data and configuration."""
    if store.exists():
        record = store.read_record()
        if record.dataset_digest != dataset.digest:  # the name covers the digest; a hand-copied directory may not
            raise RunError(f"run {run_id} was made from other data", hint="remove its directory or use another --out")
        record.finished_at = None
        return record
    record = RunRecord(
        run_id=run_id,
        config={k: list(v) if isinstance(v, tuple) else v for k, v in vars(config).items()},
        dataset_digest=dataset.digest,
        model=model,
        prompt_version=prompt_version(),
        items=list(plan.items),
        people=list(plan.people),
        data_report=dataset.report.lines(),
    )
    store.write_record(record)
    return record


def execute(
    store: RunStore,
    record: RunRecord,
    config: RunConfig,
    dataset: Dataset,
    plan: RunPlan,
    instrument: Instrument,
    models: Models | None,
    respondents: sessionmaker[Session] | None,
    bank: sessionmaker[Session] | None = None,
    progress: Progress | None = None,
) -> None:
    """Answer everything the run still lacks; safe to interrupt and call again."""
    target, retest = dataset.answers(TARGET_WAVE), dataset.answers(RETEST_WAVE)
    done = {(r.person, r.condition) for r in store.rows()}
    items = [instrument.item(k) for k in plan.items]

    def truth(person: str, item: str) -> tuple[int | None, int | None]:
        if dataset.own:  # kept out of the files: joined again when scored (``with_truth``)
            return None, None
        return target.get(person, {}).get(item), retest.get(person, {}).get(item)

    def trial(person: str) -> Trial:
        return Trial(person, dataset.demographics.get(person, {}), target.get(person, {}), items, plan.context,
                     config.survey_context)  # fmt: skip

    solvers = [SOLVERS[name] for name in config.conditions]
    with timed_segment(store, record) as save:
        shared = None if plan.leave_one_out else _baseline(plan, target, dataset.demographics, None)
        for solver in (s for s in solvers if not s.uses_model and not s.derived):
            rows = []
            for person in (p for p in plan.people if (p, solver.name) not in done):
                baseline = shared or _baseline(plan, target, dataset.demographics, person)
                guesses = solver.guesses(baseline, trial(person))
                rows += [ResultRow(person, k, solver.name, guess, *truth(person, k)) for k, guess in guesses.items()]
            store.append(rows)
        # Person by person, every model condition for one person before the next, so that a run
        # stopped early still compares the conditions on the same people.
        asked = [s for s in solvers if s.uses_model]
        if asked and (models is None or (respondents is None and not dataset.own)):
            raise RunError("model conditions need a chat model, an embedder and the evaluation database")
        run = _Run(record.run_id, dataset, instrument, models, respondents, bank, config)  # type: ignore[arg-type]
        finished = {s.name: sum(1 for p in plan.people if (p, s.name) in done) for s in asked}
        for person in plan.people:
            for solver in (s for s in asked if (person, s.name) not in done):
                answers = _answer(solver, trial(person), run)
                rows = [
                    ResultRow(
                        person, a.target, solver.name, _code(a.value), *truth(person, a.target),
                        a.usage.prompt_tokens, a.usage.cached_tokens, a.usage.completion_tokens,
                        round(a.seconds, 3), a.cached,
                    )
                    for a in answers
                ]  # fmt: skip
                store.append(rows)
                finished[solver.name] += 1
                save()
                if progress:
                    progress(solver.name, finished[solver.name], len(plan.people))
        record.finished_at = datetime.now(UTC).isoformat(timespec="seconds")


def with_truth(rows: list[ResultRow], dataset: Dataset) -> list[ResultRow]:
    """The rows with each person's own two answers, where the run's files leave them out (``Dataset.own``)."""
    if not dataset.own:
        return rows
    target, retest = dataset.answers(TARGET_WAVE), dataset.answers(RETEST_WAVE)
    return [replace(r, actual=target.get(r.person, {}).get(r.item), retest=retest.get(r.person, {}).get(r.item))
            for r in rows]  # fmt: skip


def _baseline(plan: RunPlan, target: dict[str, dict[str, int]], demographics: dict, person: str | None) -> ModeBaseline:
    """The baselines for one person: fit on the training set, or on everyone else (leave one out)."""
    fit_on = (p for p in target if p != person) if plan.leave_one_out else plan.training
    return ModeBaseline({p: target[p] for p in fit_on if p in target}, demographics)


@dataclass(frozen=True)
class _Run:
    run_id: str
    dataset: Dataset
    instrument: Instrument
    models: Models
    respondents: sessionmaker[Session]
    bank: sessionmaker[Session] | None
    config: RunConfig


def _answer(solver: Solver, trial: Trial, run: _Run) -> list[AgentAnswer]:
    """A solver's answers for one person, through the door of the database its agent lives in."""
    options: dict[str, Any] = {"items_per_call": run.config.items_per_call, "seed": run.config.answer_seed,
                               "reasons": run.config.reasons}  # fmt: skip
    grant = Grant.evaluation(run.run_id)
    if solver.bank_agent or run.dataset.own:  # the bank's participants: only ever their own agent
        if run.bank is None:
            return []  # no bank to ask: only the respondents' database was opened
        with run.bank() as session:
            linked = bank_agent_of(session, trial.person)
        if linked is None:
            return []  # only people who gave the bank an interview have a bank agent
        bank_door, sessions, agent_id = run.models.bank_door, run.bank, linked[0].id
    else:
        with transaction(run.respondents) as session:
            agent, _ = respondent_agent(
                session, run.models.respondent_keys, run.dataset.digest, trial.person, trial.demographics
            )
        bank_door, sessions, agent_id = run.models.respondent_door, run.respondents, agent.id
    return [a for condition, asked in solver.calls(trial) for a in bank_door.survey(
        sessions, grant, agent_id, run.instrument, asked, condition, **options).answers]  # fmt: skip


def bank_agent_of(session: Session, person: str) -> tuple[Agent, Participant] | None:
    """The bank's active agent of the participant whose pseudonym is the dataset's person id."""
    row = session.execute(
        select(Agent, Participant)
        .join(Participant, Participant.id == Agent.participant_id)
        .where(Participant.pseudonym == person, Agent.status == "active", Participant.consent == "consented")
    ).first()
    return (row[0], row[1]) if row else None


def _code(value: object) -> int | None:
    if not isinstance(value, int | float | str):
        return None
    try:
        return int(value)
    except ValueError:
        return None
