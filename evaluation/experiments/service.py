"""Running (or resuming) an experiment run on the bank's agents and writing its summary and report."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from agentbank.consultation.answering.costs import Estimate
from agentbank.consultation.door import AgentDoor
from agentbank.core.prompts.files import prompt_version
from agentbank.core.settings import Settings
from agentbank.db import transaction
from evaluation.experiments.report import render_comparison, render_report
from evaluation.experiments.runs import (
    ExperimentConfig,
    Progress,
    chosen_agents,
    estimate_experiments,
    opened_rows,
    run_experiments,
    run_id,
)
from evaluation.experiments.summary import summarize
from evaluation.runs.records import RunError, RunRecord, RunStore

SUMMARY, REPORT = "summary.json", "report.html"


@dataclass(frozen=True)
class ExperimentOutcome:
    """A finished run: where it lies, what it was, its figures, and whether it resumed an earlier start."""

    store: RunStore
    record: RunRecord
    summary: dict[str, Any]
    resumed: bool


def estimate_experiment_set(
    door: AgentDoor, sessions: sessionmaker[Session], settings: Settings, config: ExperimentConfig, root: Path
) -> Estimate:
    """What ``run_experiment_set`` would still cost (a run already begun resumes: its trials cost nothing)."""
    with transaction(sessions) as session:
        agents = chosen_agents(session, config)
    store = RunStore(root, run_id(config, agents, door.chat.name, prompt_version()))
    return estimate_experiments(door, sessions, settings, config, store, agents)


def run_experiment_set(
    door: AgentDoor, sessions: sessionmaker[Session], model: str, config: ExperimentConfig, root: Path,
    progress: Progress | None = None,
) -> ExperimentOutcome:  # fmt: skip
    """Run every trial of ``config`` not yet made under ``root``, then write the summary and the report."""
    with transaction(sessions) as session:
        agents = chosen_agents(session, config)
    name = run_id(config, agents, model, prompt_version())
    store = RunStore(root, name)
    resumed = store.exists()
    if resumed:
        record = store.read_record()
    else:
        digest = hashlib.sha256(json.dumps([str(a) for a in agents]).encode()).hexdigest()[:16]
        record = RunRecord(name, asdict(config), digest, model, prompt_version(), list(config.experiments),
                           [str(a) for a in agents])  # fmt: skip
        store.write_record(record)
    run_experiments(door, sessions, config, store, record, agents, progress)
    record.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
    store.write_record(record)
    summary = summarize(
        opened_rows(store, sessions, door.keys), config.experiments, config.conditions, config.blindings
    )
    (store.path / SUMMARY).write_text(json.dumps(summary, indent=1))
    (store.path / REPORT).write_text(render_report(record, summary))
    return ExperimentOutcome(store, record, summary, resumed)


def compare_experiment_runs(directories: list[Path], out: Path) -> Path:
    """Write a side-by-side HTML page of finished experiment runs (each holds run.json and summary.json)."""
    runs = []
    for directory in directories:
        if not (directory / SUMMARY).is_file():
            raise RunError(
                f"{directory.name} has no summary yet", hint="run or resume it with `agentbank experiment run`"
            )
        runs.append(
            (RunStore(directory.parent, directory.name).read_record(), json.loads((directory / SUMMARY).read_text()))
        )
    out.write_text(render_comparison(runs))
    return out
