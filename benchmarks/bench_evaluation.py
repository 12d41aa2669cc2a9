"""The evaluation run for real: the embedded model's survey and demographic agents against both
baselines on GSS panel respondents (resumes a stopped run; answers made before come from the cache).

Run: python -m benchmarks.bench_evaluation [--sample 100] [--items 30] [--out DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentbank.core.settings import Settings
from benchmarks.common import save
from evaluation.runs.execute import models_of
from evaluation.runs.records import RunConfig
from evaluation.service import REPORT, run_evaluation
from migrations.runner import SCHEMA


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="gss-panel06")
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    settings = Settings()
    # Codes only, five items a call, and a survey context from other topics: the settings under
    # which the 135M model answers 6,000 items on two cores in about an hour.
    config = RunConfig(
        dataset=args.dataset, sample=args.sample, n_items=args.items, reasons=False, items_per_call=5,
        survey_context="other-topics",
    )  # fmt: skip
    models = models_of(settings)
    try:
        outcome = run_evaluation(config, settings, args.out or settings.data_dir / "evaluations", models, schema=SCHEMA)
    finally:
        models.chat.close()
        models.embedder.close()
    record, summary = outcome.record, outcome.summary
    figures = {
        "run": record.run_id,
        "config": record.config,
        "model": record.model,
        "prompt_version": record.prompt_version,
        "dataset_digest": record.dataset_digest,
        "people": len(record.people),
        "items": record.items,
        "wall_seconds_all_segments": record.wall_seconds,
        "tokens": summary["tokens"],
        "conditions": summary["conditions"],
        "sensitivity": summary["sensitivity"],
        "warnings": summary["warnings"],
        "data_report": record.data_report,
        "parity_dpd": {c: {k: v["dpd"] for k, v in per.items()} for c, per in summary["parity"].items()},
        "items_accuracy": summary["items"],
    }
    path = save(f"evaluation-{args.dataset}", figures)
    for name, c in summary["conditions"].items():
        interval = c["normalized_accuracy_ci"] or (float("nan"), float("nan"))
        print(f"{name:>16}: accuracy {c['accuracy']:.3f}  normalized {c['normalized_accuracy']:.3f} "
              f"[{interval[0]:.3f}, {interval[1]:.3f}]  people {c['people']}")  # fmt: skip
    for name, c in summary["sensitivity"].items():
        if c.get("items"):
            print(f"{name:>16}: dispersion ratio {c['dispersion_ratio'] or 0:.2f}  items varying "
                  f"{c['items_varying']:.0%}  shuffle {c['shuffle_accuracy']:.3f}  p {c['p_value']:.3f}")  # fmt: skip
    for warning in summary["warnings"]:
        print(f"warning: {warning}")
    print(f"retest accuracy (the ceiling): {next(iter(summary['conditions'].values()))['self_consistency']:.3f}")
    print(f"wall time {record.wall_seconds:.0f} s; figures in {path}; report {outcome.store.path / REPORT}")


if __name__ == "__main__":
    main()
