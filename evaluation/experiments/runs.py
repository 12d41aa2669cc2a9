"""Experiment runs: published experiments on the bank's agents, kept like evaluation runs.

A run is named by a digest of what decides its answers (experiments and their versions, agents,
conditions, blindings, seed, model, prompt version), lives in its own directory (``run.json``,
``results.jsonl`` with one line per experiment × condition × blinding × agent, its answers sealed with
the participant's data key, ``summary.json`` and ``report.html``) and resumes where it stopped. Every
agent keeps its arm across conditions and blindings (one seeded assignment per experiment), so the
blinded and unblinded estimates differ only in what the agents were told. The results hold agents'
answers only, sealed: a participant who withdraws leaves nothing readable in a run, and the next
summary leaves their agent out.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from agentbank.consultation.answering import AgentUnavailableError, Condition
from agentbank.consultation.answering.costs import Estimate, Estimator
from agentbank.consultation.door import AgentDoor, Grant
from agentbank.core.errors import PermissionDeniedError
from agentbank.core.settings import Settings
from agentbank.core.statuses import ConsentStatus
from agentbank.db import transaction
from agentbank.db.models import Agent, Participant
from agentbank.keys.crypto import DataKeyDestroyedError, KeyRing
from agentbank.providers.tokens import counter_of
from agentbank.publication.population import active_agent_ids
from agentbank.restricted.experiments import load_experiment
from agentbank.restricted.experiments.assignment import assign
from agentbank.restricted.experiments.model import Blinding
from agentbank.restricted.experiments.running import EXPERIMENT_NOTE, TrialResult, estimate_trial, run_trial
from evaluation.runs.records import RunError, RunRecord, RunStore, append_lines, read_lines, timed_segment

EXPERIMENT_CONDITIONS = ("interview", "demographic", "persona")
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ExperimentConfig:
    """What a run asks: which experiments, of how many agents (0: every active agent), under which
    conditions and blindings, with which assignment seed."""

    experiments: tuple[str, ...]
    conditions: tuple[str, ...] = ("interview", "demographic")
    blindings: tuple[str, ...] = (Blinding.UNBLINDED.value, Blinding.BLINDED.value)
    agents: int = 0
    seed: int = 0
    reasons: bool = True  # off: the model gives codes only (far fewer tokens; the reasons are not analysed)

    def __post_init__(self) -> None:
        for key in self.experiments:
            load_experiment(key)
        if not self.experiments:
            raise RunError("name at least one experiment", hint="`agentbank experiment list` shows them")
        unknown = [c for c in self.conditions if c not in EXPERIMENT_CONDITIONS]
        if unknown or not self.conditions:
            raise RunError(f"unknown condition {', '.join(unknown) or '(none)'}",
                           hint=f"use {', '.join(EXPERIMENT_CONDITIONS)}")  # fmt: skip
        if not self.blindings or any(b not in {x.value for x in Blinding} for b in self.blindings):
            raise RunError("blinding is unblinded, blinded or both")
        if self.agents < 0:
            raise RunError("--agents is 0 (every active agent) or more")


@dataclass(frozen=True)
class TrialRow(TrialResult):
    """One agent's trial in one experiment, as a line of the run's results: its answers ``sealed`` with the
    participant's data key (``outcomes`` and ``probes`` are empty in the file), so a withdrawal, which
    destroys the key, leaves them unreadable here as everywhere else."""

    experiment: str = ""
    sealed: str = ""


def chosen_agents(session: Session, config: ExperimentConfig) -> list[uuid.UUID]:
    """The run's agents: every active agent of a consenting participant, or a seeded draw of them."""
    agents = sorted(active_agent_ids(session), key=str)
    if config.agents and config.agents < len(agents):
        agents = sorted(random.Random(config.seed).sample(agents, config.agents), key=str)  # noqa: S311 - reproducible
    if len(agents) < 2:
        raise RunError("an experiment needs at least two active agents", hint="build agents with `agentbank build`")
    return agents


def run_id(config: ExperimentConfig, agents: Sequence[uuid.UUID], model: str, prompt_version: str) -> str:
    """The run's name: the experiments and a digest of everything that decides its answers."""
    versions = {key: load_experiment(key).version for key in config.experiments}
    content = {"config": asdict(config), "versions": versions, "agents": [str(a) for a in agents], "model": model,
               "prompt_version": prompt_version}  # fmt: skip
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]
    stem = "-".join(config.experiments) if len(config.experiments) <= 2 else f"{len(config.experiments)}experiments"
    return f"{stem}-{digest}"


def rows(store: RunStore) -> list[TrialRow]:
    """The run's trials so far as stored, answers sealed (a last line cut short by a crash is ignored)."""
    return read_lines(store.results_path, _row)


def opened_rows(store: RunStore, sessions: sessionmaker[Session], keys: KeyRing) -> list[TrialRow]:
    """The run's trials with their answers opened; a trial whose participant has withdrawn since is
    unavailable, its answers unreadable, and so left out of every figure like one withdrawn during the run."""
    opened = []
    with sessions() as session:
        for row in rows(store):
            answers = _open(session, keys, row) if row.available else None
            if answers is None:
                opened.append(replace(row, available=False))
            else:
                opened.append(replace(row, outcomes=answers["outcomes"], probes=answers["probes"]))
    return opened


def _seal(session: Session, keys: KeyRing, result: TrialResult, experiment: str) -> TrialRow:
    row = TrialRow(**{**asdict(result), "arms": result.arms, "outcomes": {}, "probes": {}}, experiment=experiment)
    if not result.available:
        return row
    participant = session.get_one(Participant, session.get_one(Agent, uuid.UUID(result.agent_id)).participant_id)
    answers = json.dumps({"outcomes": result.outcomes, "probes": result.probes})
    try:
        sealed = keys.cipher(participant.id, participant.wrapped_key).seal(answers)
    except DataKeyDestroyedError:  # withdrawn between the answers and this line: nothing of them is kept
        return replace(row, available=False)
    return replace(row, sealed=base64.b64encode(sealed).decode())


def _open(session: Session, keys: KeyRing, row: TrialRow) -> dict[str, Any] | None:
    agent = session.get(Agent, uuid.UUID(row.agent_id))
    participant = session.get(Participant, agent.participant_id) if agent is not None else None
    if participant is None or participant.consent != ConsentStatus.CONSENTED:
        return None
    try:
        return dict(json.loads(keys.cipher(participant.id, participant.wrapped_key).open(base64.b64decode(row.sealed))))
    except DataKeyDestroyedError:
        return None


def _row(**data: object) -> TrialRow:
    data["arms"] = tuple(data.get("arms", ()))  # type: ignore[arg-type]
    return TrialRow(**data)  # type: ignore[arg-type]


def run_experiments(
    door: AgentDoor,
    sessions: sessionmaker[Session],
    config: ExperimentConfig,
    store: RunStore,
    record: RunRecord,
    agents: Sequence[uuid.UUID],
    progress: Progress | None = None,
) -> list[TrialRow]:
    """Run every trial not yet in ``store``, appending each as it ends (sealed); returns all of the run's trials."""
    done = {(r.experiment, r.condition, r.blinding, r.agent_id) for r in rows(store)}
    grant = Grant.experiment(store.path.name)
    with timed_segment(store, record) as save:
        for key in config.experiments:
            experiment = load_experiment(key)
            arms = assign(experiment, agents, config.seed)
            for condition, blinding in ((c, b) for c in config.conditions for b in config.blindings):
                for n, agent in enumerate(agents):
                    if progress:
                        progress(f"{key} · {condition} · {blinding}", n, len(agents))
                    if (key, condition, blinding, str(agent)) in done:
                        continue
                    try:
                        result = run_trial(
                            door, sessions, grant, experiment, agent, arms[agent], Blinding(blinding),
                            Condition(condition), seed=config.seed, reasons=config.reasons,
                        )  # fmt: skip
                    except (AgentUnavailableError, PermissionDeniedError):  # withdrawn since the run began
                        result = TrialResult(str(agent), arms[agent], blinding, condition, available=False)
                    with sessions() as session:
                        sealed = _seal(session, door.keys, result, key)
                    append_lines(store.results_path, [sealed])
                save()
    return rows(store)


def estimate_experiments(
    door: AgentDoor, sessions: sessionmaker[Session], settings: Settings, config: ExperimentConfig, store: RunStore,
    agents: Sequence[uuid.UUID],
) -> Estimate:  # fmt: skip
    """What ``run_experiments`` would still cost: every trial not yet in ``store``, planned in the order the
    run makes them (``experiments.running.estimate_trial``); nothing asked, written or audited."""
    done = {(r.experiment, r.condition, r.blinding, r.agent_id) for r in rows(store)} if store.exists() else set()
    grant = Grant.experiment(store.path.name)
    with transaction(sessions) as session:
        estimator = Estimator(session, settings, door.chat.name, counter_of(door.chat))
    for key in config.experiments:
        experiment = load_experiment(key)
        arms = assign(experiment, agents, config.seed)
        for condition, blinding in ((c, b) for c in config.conditions for b in config.blindings):
            for agent in (a for a in agents if (key, condition, blinding, str(a)) not in done):
                try:
                    estimate_trial(estimator, door, sessions, grant, experiment, agent, arms[agent], Blinding(blinding),
                                   Condition(condition), seed=config.seed, reasons=config.reasons)  # fmt: skip
                except (AgentUnavailableError, PermissionDeniedError):  # withdrawn: the run leaves it out
                    continue
    estimate = estimator.finish()
    estimate.notes.append(EXPERIMENT_NOTE)
    return estimate
