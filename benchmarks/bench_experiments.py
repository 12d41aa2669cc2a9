"""Park et al.'s five experiments on the bank's agents with the configured models: wall time, CPU, peak
memory and tokens of a run, and its figures beside the people's (what `agentbank experiment run` reports).

Needs a bank with agents (`agentbank demo` builds twelve with the embedded models). A new ``--seed``
draws a new assignment, so its answers are made afresh; the same seed again takes them from the cache
(the share of trials answered from the cache is reported).

Run: python -m benchmarks.bench_experiments [--experiments all] [--conditions interview,demographic]
     [--blinding both] [--agents 0] [--seed 1] [--no-reasons] [--quick]   (quick: cooney, 2 agents, blinded)
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import psutil
from rich.console import Console

from agentbank.core.settings import Settings
from agentbank.restricted.experiments import EXPERIMENTS
from app.opening import open_bank
from benchmarks.common import save
from evaluation.experiments.runs import ExperimentConfig, rows
from evaluation.experiments.service import run_experiment_set

console = Console()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", default="all")
    parser.add_argument("--conditions", default="interview,demographic")
    parser.add_argument("--blinding", default="both", choices=("both", "blinded", "unblinded"))
    parser.add_argument("--agents", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-reasons", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    names = tuple(EXPERIMENTS) if args.experiments == "all" else tuple(args.experiments.split(","))
    blindings = ("unblinded", "blinded") if args.blinding == "both" else (args.blinding,)
    config = ExperimentConfig(names, tuple(args.conditions.split(",")), blindings, args.agents, args.seed,
                              not args.no_reasons)  # fmt: skip
    if args.quick:
        config = ExperimentConfig(("cooney",), ("demographic",), ("blinded",), 2, args.seed, False)
    process = psutil.Process()
    with open_bank(Settings()) as bank, tempfile.TemporaryDirectory() as out:
        chat, _ = bank.require_models()
        cpu, began = process.cpu_times(), time.perf_counter()
        outcome = run_experiment_set(bank.door, bank.sessions, chat.name, config, Path(out))
        wall = time.perf_counter() - began
        cpu_s = sum(process.cpu_times()[:2]) - sum(cpu[:2])
        trials = rows(outcome.store)
    answered = [t for t in trials if t.available]
    figures = {
        "chat_model": chat.name,
        "config": {
            "experiments": list(config.experiments),
            "conditions": list(config.conditions),
            "blindings": list(config.blindings),
            "agents": len(outcome.record.people),
            "seed": config.seed,
            "reasons": config.reasons,
        },
        "trials": len(trials),
        "trials_from_cache": sum(t.cached for t in answered),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu_s, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "tokens": sum(t.tokens for t in answered),
        "model_seconds": round(sum(t.seconds for t in answered), 1),
        "overall": outcome.summary["overall"],
        "effects": [
            {
                "experiment": e["key"],
                "people_d": e["human"]["d"],
                "condition": r["condition"],
                "blinding": r["blinding"],
                "d": (r.get("effect") or {}).get("d"),
                "p": (r.get("effect") or {}).get("p"),
                "flagged_probes": sum(b["flagged"] for b in r.get("balance", [])),
            }
            for e in outcome.summary["experiments"]
            for r in e["results"]
        ],
        "blinding_differs": {e["key"]: e.get("blinding_differs") for e in outcome.summary["experiments"]},
        "warnings": outcome.summary["warnings"],
    }
    console.print(f"{len(trials)} trials in {wall:.0f} s ({cpu_s:.0f} CPU-s), {figures['tokens']} tokens, "
                  f"peak RSS {figures['peak_rss_mib']} MiB")  # fmt: skip
    for overall in figures["overall"]:
        console.print(overall)
    console.print(f"saved {save('experiments', figures)}")


if __name__ == "__main__":
    main()
