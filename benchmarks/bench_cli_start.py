"""How long an ``agentbank`` command takes from the prompt to its answer, mostly the imports before it runs:
the list of commands and a set of commands' own ``--help`` (``--every-help``: every command's), ``db current``
and ``clients list`` on a data directory of their own (migrated first, untimed), and a worker's time from its
start to its first task done (a release cut queued before it starts, on an empty bank: a task that needs no
model, as the tasks a worker finds first often do).

Run: python -m benchmarks.bench_cli_start [--runs 3] [--against DIR] [--every-help] [--max-load 1.0]
(--against DIR times the same commands from another checkout of the project as well, an older commit's
say, each run alternating between the two, so that both are measured in one sitting on the same load.)

Each command runs in a process of its own, as a person would run it, with its bytecode cached (in the
scratch directory: a machine that sets PYTHONDONTWRITEBYTECODE would otherwise compile the bank's modules
anew on every run, which no installed bank does); an untimed round first fills that cache. The runs wait
until the machine's 1-minute load is at most --max-load: other work on two cores distorts every figure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.common import save

ROOT = Path(__file__).resolve().parents[1]
HELPS = (("--help",), ("db", "--help"), ("worker", "--help"), ("serve", "--help"), ("evaluate", "--help"),
         ("study", "create", "--help"), ("audit", "verify", "--help"))  # fmt: skip
DATABASE = (("db", "current"), ("clients", "list"))
WORKER = "worker: first task done"
# What a worker logs (with -v) when the queued cut has run: the clock stops there, before the worker exits.
FIRST_TASK_DONE = ("Job agentbank.cut_release_now[", "ended with status: Success")
console = Console(width=150)


def environment(data_dir: Path, scratch: Path) -> dict[str, str]:
    """A command's environment: its own data directory, the fake models, and bytecode cached in ``scratch``."""
    env = {**os.environ, "AGENTBANK_DATA_DIR": str(data_dir), "AGENTBANK_CHAT_PROVIDER": "fake",
           "AGENTBANK_EMBEDDER_PROVIDER": "fake", "COLUMNS": "200",
           "PYTHONPYCACHEPREFIX": str(scratch / "pycache")}  # fmt: skip
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def command_line(*args: str) -> list[str]:
    return [sys.executable, "-c", "from app.cli import main; main()", *args]


def agentbank(tree: Path, data_dir: Path, scratch: Path, *args: str) -> float:
    """Seconds ``agentbank ARGS`` took, run from the checkout ``tree`` (its own code, this interpreter)."""
    began = time.perf_counter()
    done = subprocess.run(command_line(*args), cwd=tree, env=environment(data_dir, scratch), capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"agentbank {' '.join(args)} failed in {tree}: {done.stderr[-500:]}")
    return elapsed


def first_task(tree: Path, data_dir: Path, scratch: Path) -> float:
    """Seconds from a worker's start to its first task done: a release cut queued just before (untimed)."""
    agentbank(tree, data_dir, scratch, "release", "cut", "--wait", "0")
    began = time.perf_counter()
    worker = subprocess.Popen(command_line("-v", "worker", "--burst"), cwd=tree, env=environment(data_dir, scratch),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    watchdog = threading.Timer(300, worker.kill)
    watchdog.start()
    done_after, output = None, []
    try:
        assert worker.stdout is not None
        for line in worker.stdout:
            output.append(line)
            if done_after is None and all(part in line for part in FIRST_TASK_DONE):
                done_after = time.perf_counter() - began
        worker.wait()
    finally:
        watchdog.cancel()
    if worker.returncode != 0 or done_after is None:
        raise SystemExit(f"the worker in {tree} took no task ({worker.returncode}): {''.join(output)[-800:]}")
    return done_after


def wait_for_quiet(max_load: float, patience_s: float) -> float:
    """The 1-minute load once it is at most ``max_load`` (or after ``patience_s``, said so)."""
    deadline = time.monotonic() + patience_s
    while (load := os.getloadavg()[0]) > max_load and time.monotonic() < deadline:
        console.print(f"[yellow]load {load:.2f} > {max_load:g}: waiting[/]")
        time.sleep(30)
    if load > max_load:
        console.print(f"[red]the load stayed at {load:.2f}; measuring anyway (see the saved load)[/]")
    return load


def commit(tree: Path) -> str:
    """The commit a checkout is at (with a + where it has changes of its own)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=tree, capture_output=True,
                           text=True)  # fmt: skip
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "") or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="times each command is run from each checkout")
    parser.add_argument("--against", type=Path, default=None, help="another checkout of the project to time too")
    parser.add_argument("--every-help", action="store_true", help="time every command's --help, not a set")
    parser.add_argument("--max-load", type=float, default=1.0, help="wait until the 1-minute load is this low")
    parser.add_argument("--patience", type=float, default=900.0, help="seconds to wait for that load at most")
    args = parser.parse_args()
    trees = {"this": ROOT, **({"against": args.against.resolve()} if args.against else {})}
    helps = HELPS
    if args.every_help:
        from app.cli import COMMANDS

        helps = (("--help",), *((name, "--help") for name in COMMANDS))
    commands: list[tuple[str, ...]] = [*helps, *DATABASE]
    scratch = Path(tempfile.mkdtemp(prefix="agentbank-cli-start-"))
    seconds: dict[tuple[str, str], list[float]] = {}
    labels = [" ".join(command) for command in commands] + [WORKER]
    try:
        for name, tree in trees.items():
            agentbank(tree, scratch / name, scratch, "db", "upgrade")
        for name, tree in trees.items():  # untimed: fills the bytecode cache
            for command in commands:
                agentbank(tree, scratch / name, scratch, *command)
            first_task(tree, scratch / name, scratch)
        load_at_start = wait_for_quiet(args.max_load, args.patience)
        for _ in range(args.runs):
            for command in commands:
                for name, tree in trees.items():
                    seconds.setdefault((name, " ".join(command)), []).append(
                        agentbank(tree, scratch / name, scratch, *command)
                    )
            for name, tree in trees.items():
                seconds.setdefault((name, WORKER), []).append(first_task(tree, scratch / name, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # the embedded servers stopped with their last command
    table = Table("command", *(f"{name} s (median)" for name in trees), *(f"{name} runs" for name in trees))
    figures: dict[str, object] = {"runs": args.runs, "commits": {name: commit(tree) for name, tree in trees.items()},
                                  "load_1_min_at_start": round(load_at_start, 2), "medians_s": {}}  # fmt: skip
    for label in labels:
        medians = [statistics.median(seconds[(name, label)]) for name in trees]
        runs = [" / ".join(f"{s:.2f}" for s in seconds[(name, label)]) for name in trees]
        table.add_row(label, *(f"{m:.2f}" for m in medians), *runs)
        key = label.replace(" ", "_").replace(":", "").strip("-")
        for name, median in zip(trees, medians, strict=True):
            figures[f"{name}_{key}_s"] = [round(s, 2) for s in seconds[(name, label)]]
            figures["medians_s"][f"{name} {label}"] = round(median, 2)  # type: ignore[index]
    console.print(table)
    console.print(f"saved to {save('cli-start', figures)}")


if __name__ == "__main__":
    main()
