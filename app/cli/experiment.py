"""``agentbank experiment``: Park et al.'s five published experiments, run on the bank's agents."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from app.cli.common import cli, comma_list, console, load_settings, open_bank

experiment_cli = typer.Typer(help="Published experiments on agents, beside the people's results.",
                             no_args_is_help=True)  # fmt: skip
cli.add_typer(experiment_cli, name="experiment")
# evaluation.experiments.runs.EXPERIMENT_CONDITIONS, as --help shows them without importing the evaluation
# (tests/app/cli/test_lazy.py checks that they are the same).
EXPERIMENT_CONDITIONS = ("interview", "demographic", "persona")


@experiment_cli.command("list")
def experiment_list() -> None:
    """The experiments the bank holds, with their design and the people's effect."""
    from agentbank.restricted.experiments import EXPERIMENTS

    table = Table("experiment", "design", "arms", "answers per agent", "people's d")
    table.columns[0].no_wrap = table.columns[2].no_wrap = True  # names are typed back: never cut
    for key, experiment in EXPERIMENTS.items():
        human = experiment.human
        people = f"{human.d:g}" + ("" if human.significant else " (n.s.)") + ("" if human.comparable else " *")
        arms = "\n".join(arm.key for arm in experiment.arms)
        table.add_row(f"{key}\n[dim]{experiment.title}[/]", experiment.design.value, arms, str(experiment.per_agent),
                      people)  # fmt: skip
    console.print(table)
    console.print("people's d: Park et al. 2024, Table 1; * printed as d but not comparable (see the report)")


@experiment_cli.command("run")
def experiment_run(
    names: Annotated[list[str], typer.Argument(help="Experiments to run (`all` for the five).")],
    agents: Annotated[int, typer.Option(help="Agents taking part (a seeded draw); 0: every active agent.")] = 0,
    condition: Annotated[
        str, typer.Option(help=f"Comma-separated: {', '.join(EXPERIMENT_CONDITIONS)}.")
    ] = "interview,demographic",
    blinding: Annotated[str, typer.Option(help="both, unblinded or blinded.")] = "both",
    seed: Annotated[int, typer.Option(help="Seed of the draw of agents and of the arms' assignment.")] = 0,
    reasons: Annotated[bool, typer.Option(help="Ask for a reason before each answer (costs tokens).")] = True,
    out: Annotated[Path | None, typer.Option(help="Where runs are kept (default: the data directory).")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Estimate calls, tokens, price and time; ask nothing, write no run.")
    ] = False,
) -> None:
    """Run experiments on the bank's agents (the same command resumes), then write the report."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    from agentbank.restricted.experiments import EXPERIMENTS
    from agentbank.restricted.experiments.model import Blinding
    from app.cli.costs import print_estimate
    from evaluation.experiments.runs import ExperimentConfig
    from evaluation.experiments.service import REPORT, estimate_experiment_set, run_experiment_set

    unblinded, blinded = Blinding.UNBLINDED.value, Blinding.BLINDED.value
    blindings = {"both": (unblinded, blinded), "unblinded": (unblinded,), "blinded": (blinded,)}
    if blinding not in blindings:
        console.print("[red]error:[/] --blinding is both, unblinded or blinded")
        raise typer.Exit(2)
    chosen = tuple(EXPERIMENTS) if names == ["all"] else tuple(names)
    config = ExperimentConfig(chosen, comma_list(condition), blindings[blinding], agents, seed, reasons)
    settings = load_settings()
    root = out or settings.data_dir / "experiments"
    if dry_run:
        with open_bank(settings, models=False) as bank, console.status("planning every trial's calls..."):
            estimate = estimate_experiment_set(bank.planner, bank.sessions, settings, config, root)
        print_estimate(estimate, f"{', '.join(chosen)} ({', '.join(config.conditions)})")
        return
    with (
        open_bank(settings) as bank,
        Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        ) as progress,
    ):
        tasks: dict[str, TaskID] = {}

        def step(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = progress.add_task(label, total=total)
            progress.update(tasks[label], completed=done + 1)

        chat, _ = bank.require_models()
        outcome = run_experiment_set(bank.door, bank.sessions, chat.name, config, root, step)
    table = Table("experiment", "condition", "blinding", "agents' d [95%]", "p", "people's d")
    for entry in outcome.summary["experiments"]:
        for found in entry["results"]:
            effect = found.get("effect") or {}
            d = effect.get("d")
            shown = "—" if d is None else f"{d:.2f} [{effect['d_low']:.2f}, {effect['d_high']:.2f}]"
            p = effect.get("p")
            table.add_row(entry["key"], found["condition"], found["blinding"], shown,
                          "—" if p is None else f"{p:.3g}", f"{entry['human']['d']:g}")  # fmt: skip
    console.print(table)
    for warning in outcome.summary["warnings"]:
        console.print(f"[yellow]check:[/] {warning}")
    verb = "resumed and finished" if outcome.resumed else "finished"
    console.print(f"run {outcome.record.run_id} {verb} in {outcome.record.wall_seconds:.0f} s of wall time")
    console.print(f"report: {outcome.store.path / REPORT}")


@experiment_cli.command("compare")
def experiment_compare(
    runs: Annotated[list[Path], typer.Argument(help="Run directories (under the data directory's experiments).")],
    out: Annotated[Path, typer.Option(help="The HTML page to write.")] = Path("experiments-compared.html"),
) -> None:
    """Put finished experiment runs (other models, conditions, seeds) side by side in one HTML page."""
    from evaluation.experiments.service import compare_experiment_runs

    console.print(f"wrote {compare_experiment_runs(runs, out)}")
