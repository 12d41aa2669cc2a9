"""Carrying out a run: the baselines, then each model condition person by person, through the
product's own answering engine (the same prompts, cache and provenance as the bank's answers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from agentbank.answering.conditions import Condition
from agentbank.answering.engine import AgentAnswer
from agentbank.bank import open_keyring
from agentbank.crypto import KeyRing
from agentbank.db.engine import transaction
from agentbank.door import AgentDoor, Grant
from agentbank.instruments.model import Instrument, Item
from agentbank.models import Agent, Participant
from agentbank.prompting import prompt_version
from agentbank.providers.chat import ChatModel
from agentbank.providers.embeddings import Embedder
from agentbank.providers.factory import build_chat_model, build_embedder
from agentbank.settings import Settings
from evaluation.baselines import ModeBaseline
from evaluation.datasets import Dataset
from evaluation.plan import RETEST_WAVE, TARGET_WAVE, Plan
from evaluation.respondents import respondent_agent
from evaluation.runs import BASELINES, ResultRow, RunConfig, RunRecord, RunStore, timed_segment

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


def start_or_resume(store: RunStore, config: RunConfig, dataset: Dataset, plan: Plan, model: str) -> RunRecord:
    """The run's record: new, or the one of an interrupted run with the same configuration."""
    if store.exists():
        record = store.read_record()
        record.finished_at = None
        return record
    record = RunRecord(
        run_id=config.run_id,
        config={k: list(v) if isinstance(v, tuple) else v for k, v in vars(config).items()},
        dataset_digest=dataset.digest,
        model=model,
        prompt_version=prompt_version(),
        items=list(plan.items),
        people=list(plan.people),
    )
    store.write_record(record)
    return record


def execute(
    store: RunStore,
    record: RunRecord,
    config: RunConfig,
    dataset: Dataset,
    plan: Plan,
    instrument: Instrument,
    models: Models,
    respondents: sessionmaker[Session],
    bank: sessionmaker[Session] | None = None,
    progress: Progress | None = None,
) -> None:
    """Answer everything the run still lacks; safe to interrupt and call again."""
    target, retest = dataset.answers(TARGET_WAVE), dataset.answers(RETEST_WAVE)
    run = _Run(config, dataset, plan, instrument, models, target)
    done = {(r.person, r.condition) for r in store.rows()}
    items = [instrument.item(k) for k in plan.items]

    def truth(person: str, item: str) -> tuple[int | None, int | None]:
        return target.get(person, {}).get(item), retest.get(person, {}).get(item)

    with timed_segment(store, record) as save:
        baseline = ModeBaseline({p: target[p] for p in plan.training if p in target}, dataset.demographics)
        for condition in (c for c in config.conditions if c in BASELINES):
            rows = []
            for person in (p for p in plan.people if (p, condition) not in done):
                demographics = dataset.demographics.get(person, {})
                for item in plan.items:
                    guess = (
                        baseline.population_mode(item)
                        if condition == "population-mode"
                        else baseline.cell_mode(item, demographics)
                    )
                    rows.append(ResultRow(person, item, condition, guess, *truth(person, item)))
            store.append(rows)
        # Person by person, every model condition for one person before the next, so that a run
        # stopped early still compares the conditions on the same people.
        asked = [c for c in config.conditions if c not in BASELINES]
        finished = {c: sum(1 for p in plan.people if (p, c) in done) for c in asked}
        for person in plan.people:
            for condition in (c for c in asked if (person, c) not in done):
                with transaction(bank if condition == "interview" and bank else respondents) as session:
                    answers = _answer(session, condition, person, items, run)
                rows = [
                    ResultRow(
                        person, a.target, condition, _code(a.value), *truth(person, a.target),
                        a.usage.prompt_tokens, a.usage.cached_tokens, a.usage.completion_tokens,
                        round(a.seconds, 3), a.cached,
                    )
                    for a in answers
                ]  # fmt: skip
                store.append(rows)
                finished[condition] += 1
                save()
                if progress:
                    progress(condition, finished[condition], len(plan.people))
        record.finished_at = datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class _Run:
    config: RunConfig
    dataset: Dataset
    plan: Plan
    instrument: Instrument
    models: Models
    target: dict[str, dict[str, int]]


def _answer(session: Session, condition: str, person: str, items: list[Item], run: _Run) -> list[AgentAnswer]:
    config, dataset, plan, instrument, models = run.config, run.dataset, run.plan, run.instrument, run.models
    grant = Grant.evaluation(config.run_id)
    options = {"items_per_call": config.items_per_call, "seed": config.answer_seed, "reasons": config.reasons}
    if condition == "interview":
        linked = _bank_agent(session, person)
        if linked is None:
            return []  # only people who gave the bank an interview have an interview agent
        agent, participant = linked
        door = models.bank_door
        return door.survey(
            session, grant, agent, participant, instrument, items, Condition("interview"), **options
        ).answers
    agent, participant = respondent_agent(
        session, models.respondent_keys, dataset.name, person, dataset.demographics.get(person, {})
    )
    door = models.respondent_door

    def answer(shown_as: Condition, asked: Sequence[Item]) -> list[AgentAnswer]:
        return door.survey(session, grant, agent, participant, instrument, asked, shown_as, **options).answers

    if condition == "demographic":
        return answer(Condition("demographic"), items)
    shown = run.target.get(person, {})
    if config.survey_context == "other-topics":
        context = {k: shown[k] for k in plan.context if k in shown}
        if not context:
            return []
        return answer(Condition("survey", answers=context), items)
    if config.survey_context == "items":
        shown = {k: v for k, v in shown.items() if k in {i.key for i in items}}
    answers: list[AgentAnswer] = []
    # Park et al. hold out the target item's whole topic, so that near-duplicate items do not leak it.
    for group in _by_topic(items):
        others = {k: v for k, v in shown.items() if k not in {i.key for i in group}}
        if others:  # someone who answered nothing else has no survey-based agent for this topic
            answers += answer(Condition("survey", answers=others), group)
    return answers


def _by_topic(items: Sequence[Item]) -> list[list[Item]]:
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(str(item.meta.get("topic", item.key)), []).append(item)
    return list(groups.values())


def _bank_agent(session: Session, person: str) -> tuple[Agent, Participant] | None:
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
