"""How long an ``agentbank`` command takes from the prompt to its answer, mostly the imports before it runs:
``db current``, ``clients list`` and ``--help`` on a data directory of their own (migrated first, untimed).

Run: python -m benchmarks.bench_cli_start [--runs 3] [--against DIR]
(--against DIR times the same commands from another checkout of the project as well, an older commit's
say, each run alternating between the two, so that both are measured in one sitting on the same load.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.common import save

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (("db", "current"), ("clients", "list"), ("--help",))
console = Console()


def agentbank(tree: Path, data_dir: Path, *args: str) -> float:
    """Seconds ``agentbank ARGS`` took, run from the checkout ``tree`` (its own code, this interpreter)."""
    env = {**os.environ, "AGENTBANK_DATA_DIR": str(data_dir), "AGENTBANK_CHAT_PROVIDER": "fake",
           "AGENTBANK_EMBEDDER_PROVIDER": "fake", "COLUMNS": "200"}  # fmt: skip
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "from app.cli import main; main()", *args], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"agentbank {' '.join(args)} failed in {tree}: {done.stderr[-500:]}")
    return elapsed


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
    args = parser.parse_args()
    trees = {"this": ROOT, **({"against": args.against.resolve()} if args.against else {})}
    scratch = Path(tempfile.mkdtemp(prefix="agentbank-cli-start-"))
    seconds: dict[tuple[str, str], list[float]] = {}
    try:
        for name, tree in trees.items():
            agentbank(tree, scratch / name, "db", "upgrade")
        for _ in range(args.runs):
            for command in COMMANDS:
                for name, tree in trees.items():
                    seconds.setdefault((name, " ".join(command)), []).append(agentbank(tree, scratch / name, *command))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # the embedded servers stopped with their last command
    table = Table("command", *(f"{name} s (median)" for name in trees), *(f"{name} runs" for name in trees))
    figures: dict[str, object] = {"runs": args.runs, "commits": {name: commit(tree) for name, tree in trees.items()}}
    for command in COMMANDS:
        label = " ".join(command)
        medians = [statistics.median(seconds[(name, label)]) for name in trees]
        runs = [" / ".join(f"{s:.1f}" for s in seconds[(name, label)]) for name in trees]
        table.add_row(label, *(f"{m:.2f}" for m in medians), *runs)
        for name in trees:
            figures[f"{name}_{label.replace(' ', '_').strip('-')}_s"] = [round(s, 2) for s in seconds[(name, label)]]
    console.print(table)
    console.print(f"saved to {save('cli-start', figures)}")
    first = " ".join(COMMANDS[0])
    line = ", ".join(f"{statistics.median(seconds[(name, first)]):.2f} s ({name})" for name in trees)
    print(f"agentbank {first}: {line}")


if __name__ == "__main__":
    main()
