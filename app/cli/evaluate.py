"""Evaluation commands: score agents against real people's own answers, and compare runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from app.cli.common import cli, comma_list, console, load_settings, open_bank

if TYPE_CHECKING:  # the evaluation (its statistics, its datasets) is imported when a run starts
    from agentbank.core.settings import Settings
    from evaluation.runs.records import RunConfig
    from evaluation.service import Outcome

MODELS_HELP = (
    "Several chat models, each running the same plan (people and items), compared on one page with the tokens "
    "each used: embedded, fake or openai:NAME[@BASE_URL]. Default: the configured model."
)
DATASET_HELP = "bank (the bank's own participants' surveys), gss-panel06, gss-panel08, or a CSV/Parquet file."
# evaluation.runs.records' CONDITIONS, DEFAULT_CONDITIONS and BANK_CONDITIONS, as --help shows them without
# importing the evaluation (tests/app/cli/test_lazy.py checks that they are the same).
CONDITIONS_HELP = (
    "Comma-separated: interview, ablated-20, ablated-40, ablated-60, ablated-80, persona, demographic, survey, "
    "interview-survey, population-mode, cell-mode, combined. Default: survey, demographic, population-mode, "
    "cell-mode, combined; for the bank: interview, interview-survey, ablated-20, ablated-40, ablated-60, "
    "ablated-80, persona, survey, demographic, population-mode, cell-mode, combined."
)


@cli.command()
def evaluate(
    dataset: Annotated[str, typer.Option(help=DATASET_HELP)],
    conditions: Annotated[str, typer.Option(help=CONDITIONS_HELP)] = "",
    sample: Annotated[
        int | None, typer.Option(help="People scored (drawn with --seed); 0: everyone. Default 100; the bank: 0.")
    ] = None,
    items: Annotated[
        int | None,
        typer.Option("--items", help="Items asked: those most people answered twice. Default 30; the bank: all."),
    ] = None,
    item_keys: Annotated[str, typer.Option("--item-keys", help="Exactly these items instead (comma-separated).")] = "",
    seed: Annotated[int, typer.Option(help="Seed of the sample of people.")] = 0,
    answer_seed: Annotated[int, typer.Option(help="Seed passed to the model.")] = 0,
    items_per_call: Annotated[int, typer.Option(help="Items asked in one model call.")] = 1,
    reasons: Annotated[bool, typer.Option(help="Ask for a reason before each answer (costs tokens).")] = True,
    survey_context: Annotated[
        str, typer.Option(help="Survey agents see the run's other items, every item ('all'), or 'other-topics'.")
    ] = "items",
    traits: Annotated[
        bool, typer.Option(help="The bank: also score its agents' Big Five and games (per trait, across people).")
    ] = True,
    out: Annotated[Path | None, typer.Option(help="Where runs are kept (default: the data directory).")] = None,
    models: Annotated[str, typer.Option("--models", help=MODELS_HELP)] = "",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="The bank: estimate calls, tokens, price and time; ask nothing.")
    ] = False,
) -> None:
    """Score agents against people's own answers, beside the baselines; the same command resumes a run."""
    from app.cli.costs import print_estimate
    from evaluation.costs import estimate_evaluation
    from evaluation.people.bank import BANK, BANK_ITEMS
    from evaluation.reports.pages import render_comparison
    from evaluation.runs.records import BANK_CONDITIONS, DEFAULT_CONDITIONS, RunConfig

    settings = load_settings()
    own = dataset == BANK
    config = RunConfig(
        dataset=dataset,
        conditions=comma_list(conditions) or (BANK_CONDITIONS if own else DEFAULT_CONDITIONS),
        sample=(0 if own else 100) if sample is None else sample,
        n_items=(BANK_ITEMS if own else 30) if items is None else items,
        items=comma_list(item_keys),
        seed=seed,
        answer_seed=answer_seed,
        items_per_call=items_per_call,
        reasons=reasons,
        survey_context=survey_context,
        traits=traits,
    )
    root = out or settings.data_dir / "evaluations"
    try:
        chosen = [with_model(settings, spec) for spec in comma_list(models)] or [settings]
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--models") from None
    if dry_run:
        for configured in chosen:
            with open_bank(configured, models=False) as bank, console.status("planning every person's calls..."):
                estimate = estimate_evaluation(config, configured, root, bank.planner, bank.sessions, bank.keys)
            print_estimate(estimate, f"evaluating {dataset} ({', '.join(config.conditions)})")
        return
    outcomes = [_run_one(config, configured, root, own) for configured in chosen]
    if len(outcomes) > 1:
        console.print(models_table(outcomes))
        if not own:  # the bank's figures are kept for its newest scoring only, never side by side on disk
            page = root / f"models-{outcomes[0].record.run_id}.html"
            page.write_text(render_comparison([(o.record, o.summary) for o in outcomes]))
            console.print(f"models compared: {page}")


def _run_one(config: RunConfig, settings: Settings, root: Path, own: bool) -> Outcome:
    """One model's run of ``config`` (made or resumed), its figures printed."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    from evaluation.runs.execute import models_of
    from evaluation.runs.records import MODEL_CONDITIONS
    from evaluation.runs.solvers import SOLVERS
    from evaluation.service import REPORT, run_evaluation
    from migrations.runner import SCHEMA

    models = None
    if any(c in MODEL_CONDITIONS for c in config.conditions):
        models = models_of(settings)
    try:
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        ) as progress:
            tasks: dict[str, TaskID] = {}

            def step(condition: str, done: int, total: int) -> None:
                if condition not in tasks:
                    tasks[condition] = progress.add_task(f"{condition} agents", total=total)
                progress.update(tasks[condition], completed=done)

            if own or any(SOLVERS[c].bank_agent for c in config.conditions):
                with open_bank(settings, models=False) as bank:
                    outcome = run_evaluation(config, settings, root, models, bank.sessions, step, schema=SCHEMA)
            else:
                outcome = run_evaluation(config, settings, root, models, None, step, schema=SCHEMA)
    finally:
        if models is not None:
            models.chat.close()
            models.embedder.close()
    for line in outcome.record.data_report:
        console.print(f"data: {escape(line)}")
    _print_summary(outcome.summary, outcome.record.model)
    verb = "resumed and finished" if outcome.resumed else "finished"
    console.print(f"run {outcome.record.run_id} {verb} in {outcome.record.wall_seconds:.0f} s of wall time")
    console.print(f"report: {outcome.store.path / REPORT}")
    return outcome


def with_model(settings: Settings, spec: str) -> Settings:
    """The settings with the chat model ``spec`` names: ``embedded``, ``fake`` or ``openai:NAME[@BASE_URL]``
    (an OpenAI-compatible endpoint; its key, if any, from the settings)."""
    provider, _, rest = spec.partition(":")
    if provider in ("embedded", "fake") and not rest:
        return settings.model_copy(update={"chat_provider": provider})
    if provider == "openai" and rest:
        name, _, url = rest.partition("@")
        return settings.model_copy(update={"chat_provider": "openai", "chat_model": name,
                                           "chat_base_url": url or settings.chat_base_url})  # fmt: skip
    raise ValueError(f"{spec!r} names no model: use embedded, fake or openai:NAME[@BASE_URL]")


def models_table(outcomes: list[Outcome]) -> Table:
    """Several models' runs of one plan side by side: each condition's normalized accuracy, and the tokens used."""
    table = Table(title="models compared on the same people and items")
    for header in ("model", "condition", "normalized", "95% interval", "prompt tokens", "completion tokens"):
        table.add_column(header, justify="right")
    for outcome in outcomes:
        tokens = outcome.summary.get("tokens", {})
        for name, c in outcome.summary["conditions"].items():
            interval, value = c["normalized_accuracy_ci"], c["normalized_accuracy"]
            table.add_row(outcome.record.model, name, "—" if value is None else f"{value:.3f}",
                          "—" if interval is None else f"{interval[0]:.3f}–{interval[1]:.3f}",
                          str(tokens.get("prompt", 0)), str(tokens.get("completion", 0)))  # fmt: skip
    return table


def conditions_table(conditions: dict, title: str) -> Table:
    """A run's conditions side by side: people, accuracy, retest, normalized accuracy and its interval."""
    table = Table(title=title)
    for header in ("condition", "people", "accuracy", "retest", "normalized", "95% interval"):
        table.add_column(header, justify="right")
    for name, c in conditions.items():
        interval = c["normalized_accuracy_ci"]
        table.add_row(
            name,
            str(c["people"]),
            f"{c['accuracy']:.3f}",
            f"{c['self_consistency']:.3f}",
            "—" if c["normalized_accuracy"] is None else f"{c['normalized_accuracy']:.3f}",
            "—" if interval is None else f"{interval[0]:.3f}–{interval[1]:.3f}",
        )
    return table


def _print_summary(summary: dict, model: str) -> None:
    from app.cli.findings import print_findings

    console.print(conditions_table(summary["conditions"], f"normalized accuracy (model: {model})"))
    checks = Table(title="do the answers depend on the person?")
    for header in ("condition", "dispersion ratio", "items varying", "accuracy", "shuffle accuracy", "p"):
        checks.add_column(header, justify="right")
    for name, c in summary.get("sensitivity", {}).items():
        if not c.get("items"):
            continue
        ratio = "—" if c["dispersion_ratio"] is None else f"{c['dispersion_ratio']:.2f}"
        checks.add_row(name, ratio, f"{c['items_varying']:.0%}", f"{c['accuracy']:.3f}",
                       f"{c['shuffle_accuracy']:.3f}", f"{c['p_value']:.2f}")  # fmt: skip
    console.print(checks)
    print_findings(summary)
    for instrument, by_measure in summary.get("traits", {}).items():
        table = Table(title=f"{instrument}: correlation with the first survey across people (MAE)")
        conditions = sorted({c for m in by_measure.values() for c in m["conditions"]})
        for header in ("measure", "people", "retest", *conditions):
            table.add_column(header, justify="right")
        for name, m in by_measure.items():
            cells = [_r(m["retest_r"], m["retest_mae"])]
            got = [m["conditions"].get(c, {}) for c in conditions]
            cells += [_r(g.get("r"), g.get("mae")) for g in got]
            table.add_row(name, str(m["people"]), *cells)
        console.print(table)
    for warning in summary.get("warnings", []):
        console.print(f"[bold red]warning[/]: {escape(warning)}")


def _r(r: float | None, mae: float | None) -> str:
    return ("—" if r is None else f"{r:.2f}") + ("" if mae is None else f" ({mae:.2f})")


@cli.command("compare-runs")
def compare(
    runs: Annotated[list[Path], typer.Argument(help="Run directories (under the data directory's evaluations).")],
    out: Annotated[Path, typer.Option(help="The HTML page to write.")] = Path("comparison.html"),
) -> None:
    """Put finished evaluation runs side by side in one HTML page."""
    from evaluation.service import compare_runs

    console.print(f"wrote {compare_runs(runs, out)}")
