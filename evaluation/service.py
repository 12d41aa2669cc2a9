"""One evaluation from start to report: load, plan, answer (resumably), score, write the report."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit.sequencer import Sequencer
from agentbank.core.prompts.files import prompt_version
from agentbank.core.settings import Settings
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.db.schema import Schema
from agentbank.instruments import load_instrument
from agentbank.instruments.gss import load_gss
from agentbank.instruments.model import Instrument
from agentbank.keys.crypto import KeyRing
from agentbank.publication.fidelity import reference_counts
from agentbank.runtime.bank import open_keyring
from evaluation.people.bank import BANK, BankSealer, bank_dataset
from evaluation.people.respondents import evaluation_engine
from evaluation.people.waves import Dataset, load_dataset
from evaluation.reports.pages import render_comparison, render_report
from evaluation.runs.execute import Models, Progress, execute, start_or_resume, with_truth
from evaluation.runs.plan import RunPlan, plan_run
from evaluation.runs.records import MODEL_CONDITIONS, ResultRow, RunConfig, RunError, RunRecord, RunStore
from evaluation.scoring.cards import store_bank_validity
from evaluation.scoring.findings import add_findings, with_combination
from evaluation.scoring.scores import MIN_GROUP, person_scores, summarize
from evaluation.scoring.traits import game_sentences, read_rows, score_traits
from evaluation.trait_runs import execute_traits

log = logging.getLogger(__name__)

SUMMARY = "summary.json"
REPORT = "report.html"


@dataclass
class Outcome:
    """Where a run's files are and what it found."""

    store: RunStore
    record: RunRecord
    summary: dict[str, Any]
    resumed: bool


def prepare(
    config: RunConfig, bank: tuple[sessionmaker[Session], KeyRing] | None = None
) -> tuple[Instrument, Dataset, RunPlan]:
    """The instrument, the dataset and the plan of a run (the bank's own participants need its sessions
    and keys; a file needs neither)."""
    instrument = load_gss()
    if config.dataset == BANK:
        if bank is None:
            raise RunError("--dataset bank needs the bank's database")
        dataset = bank_dataset(*bank, instrument)
    else:
        dataset = load_dataset(config.dataset, instrument)
    plan = plan_run(
        dataset, instrument, n_items=config.n_items, sample=config.sample, seed=config.seed, items=config.items
    )
    return instrument, dataset, plan


def run_evaluation(
    config: RunConfig,
    settings: Any,
    root: Path,
    models: Models | None,
    bank_sessions: Any = None,
    progress: Progress | None = None,
    *,
    schema: Schema | None = None,
) -> Outcome:
    """Run (or resume) ``config`` under ``root`` and write its summary and report.

    ``schema`` (the bank's migrations) creates the respondents' database that model conditions need.
    """
    keys = (models.keys if models else open_keyring(settings)) if config.dataset == BANK else None
    bank = (bank_sessions, keys) if bank_sessions is not None and keys is not None else None
    instrument, dataset, plan = prepare(config, bank)
    needs_models = any(c in MODEL_CONDITIONS for c in config.conditions)
    if needs_models and (models is None or (schema is None and not dataset.own)):
        raise RunError("model conditions need a chat model, an embedder and the bank's schema")
    model = models.chat.name if models else "none"
    run_id = config.run_id(dataset.digest, model, prompt_version())
    # The bank's own participants: every line about one of them sealed with their key.
    store = RunStore(root, run_id, BankSealer(bank_sessions, keys) if dataset.own and keys is not None else None)
    resumed = store.exists()
    record = start_or_resume(store, run_id, config, dataset, plan, model)
    # The bank's own participants are asked only through their own agents, never as respondents.
    engine = evaluation_engine(settings, schema) if needs_models and schema is not None and not dataset.own else None
    try:
        respondents = make_sessionmaker(engine) if engine is not None else None
        execute(store, record, config, dataset, plan, instrument, models, respondents, bank_sessions, progress)
    finally:
        if engine is not None:
            _chain_audit(make_sessionmaker(engine), settings)
            engine.dispose()
    traits = _traits(store, record, config, dataset, settings, models, bank_sessions, progress)
    rows = with_truth(store.rows(), dataset)
    reference = reference_of(settings.reference_data_dir, instrument, plan.items) if dataset.own else None
    summary = write_report(store, record, instrument, dataset.demographics, settings.evaluation_min_group, rows,
                           traits, people=not dataset.own, weights=dataset.weights or None,
                           reference=reference)  # fmt: skip
    if bank_sessions is not None:
        card_keys = keys or (models.keys if models else open_keyring(settings))  # cards are sealed per person
        with transaction(bank_sessions) as session:
            store_bank_validity(session, card_keys, record, rows, person_scores(rows, instrument), summary,
                                instrument.key)  # fmt: skip
    if dataset.own:
        forget_earlier_bank_figures(root, run_id)
    return Outcome(store, record, summary, resumed)


def reference_of(reference_dir: Path, instrument: Instrument, items: Sequence[str]) -> dict[str, dict[int, int]]:
    """The GSS's own distribution of each item in the reference year, where the reference data hold it."""
    found = {key: reference_counts(reference_dir, instrument.item(key)) for key in items}
    return {key: counts for key, counts in found.items() if counts}


def _chain_audit(sessions: sessionmaker[Session], settings: Settings) -> None:
    """The evaluation database's own audit events (each respondent's agent answering) are chained
    before the run ends: no API or worker runs on that database to do it."""
    try:
        Sequencer(sessions, settings.audit_sequence_interval_s).run_until_done()
    except SQLAlchemyError:  # the run's results stand; the next run chains what is left
        log.warning("could not chain the evaluation database's audit events")


def _traits(
    store: RunStore, record: RunRecord, config: RunConfig, dataset: Dataset, settings: Any, models: Models | None,
    bank_sessions: Any, progress: Progress | None,
) -> dict[str, Any] | None:  # fmt: skip
    """The Big Five and games of the bank's own participants (asked, then scored), where the run has them."""
    if not (dataset.own and config.traits and dataset.battery):
        return None
    instruments = [load_instrument(key, settings.reference_data_dir) for key in dataset.battery_instruments()]
    if models is not None and bank_sessions is not None:
        execute_traits(store, record.run_id, config, dataset, instruments, models, bank_sessions, progress)
    return score_traits(instruments, dataset.battery, read_rows(store.path, store.sealer))


def write_report(
    store: RunStore, record: RunRecord, instrument: Instrument, demographics: dict, min_group: int = MIN_GROUP,
    rows: list[ResultRow] | None = None, traits: dict[str, Any] | None = None, *, people: bool = True,
    weights: dict[str, float] | None = None, reference: dict[str, dict[int, int]] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Score the run's results (``rows``, else the store's) and write ``summary.json`` and ``report.html``;
    ``traits`` are the Big Five and games figures of a run of the bank's own participants. ``people``: each
    person's score too (never for the bank's own participants, whose scores live only in their sealed cards).
    ``weights`` (person → weight) weigh the fidelity of aggregates; ``reference`` (item → code → count) is
    the population's distribution the bank's are set beside."""
    seed = int(record.config.get("seed", 0))
    rows, served = with_combination(store.rows() if rows is None else rows, record.config.get("conditions", ()), seed)
    scores = person_scores(rows, instrument)
    summary = summarize(scores, rows, demographics, seed=seed, min_group=min_group)
    add_findings(summary, rows, scores, instrument, demographics, served=served, weights=weights, reference=reference,
                 seed=seed)  # fmt: skip
    summary["tokens"] = _tokens(rows)
    if traits is not None:
        summary["traits"] = traits
        summary["sentences"] += game_sentences(traits)
    if people:
        summary["people"] = {
            s.person + "/" + s.condition: {"accuracy": s.accuracy, "normalized": s.normalized, "items": s.items}
            for s in scores
        }
    (store.path / SUMMARY).write_text(json.dumps(summary, indent=1))
    (store.path / REPORT).write_text(render_report(record, summary))
    return summary


def forget_earlier_bank_figures(root: Path, newest: str) -> None:
    """Only the newest scoring of the bank's own participants keeps its figures: two scorings a retest apart
    would show that person's answers by their difference. Earlier runs keep their sealed lines (to resume
    from) and their record, not their summary or report."""
    for record in root.glob("*/run.json"):
        run = record.parent
        if run.name == newest:
            continue
        try:
            config = json.loads(record.read_text()).get("config", {})
        except (OSError, ValueError):
            continue
        if config.get("dataset") == BANK:
            for name in (SUMMARY, REPORT):
                (run / name).unlink(missing_ok=True)


def _tokens(rows: list[ResultRow]) -> dict[str, int]:
    fresh = [r for r in rows if not r.cached]
    return {
        "prompt": sum(r.prompt_tokens for r in fresh),
        "cached": sum(r.cached_tokens for r in fresh),
        "completion": sum(r.completion_tokens for r in fresh),
    }


def compare_runs(directories: list[Path], out: Path) -> Path:
    """Write a side-by-side HTML page of finished runs (each directory holds run.json and summary.json)."""
    runs = []
    for directory in directories:
        store = RunStore(directory.parent, directory.name)
        if not (directory / SUMMARY).is_file():
            raise RunError(f"{directory.name} has no summary yet", hint="run or resume it with `agentbank evaluate`")
        runs.append((store.read_record(), json.loads((directory / SUMMARY).read_text())))
    out.write_text(render_comparison(runs))
    return out
