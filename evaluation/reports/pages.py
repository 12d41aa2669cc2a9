"""A run's HTML report: one self-contained file with its plots, and a side-by-side of several runs."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no screen: render to memory
import matplotlib.pyplot as plt

from evaluation.reports.findings import combination_section, distortions_section, fidelity_section
from evaluation.reports.tables import table, with_interval
from evaluation.runs.records import RunRecord
from evaluation.runs.solvers import ABLATIONS

# Park et al. 2024: GSS normalized accuracy of interview agents (two-week retest).
PAPER_REFERENCE = 0.85


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def normalized_plot(summary: dict[str, Any]) -> str:
    """Normalized accuracy by condition with 95% bootstrap intervals, as a base64 PNG."""
    conditions = {n: c for n, c in summary["conditions"].items() if c["normalized_accuracy"] is not None}
    names = list(conditions)
    values = [c["normalized_accuracy"] for c in conditions.values()]
    intervals = [c["normalized_accuracy_ci"] or (v, v) for c, v in zip(conditions.values(), values, strict=True)]
    low = [v - lo for v, (lo, _) in zip(values, intervals, strict=True)]
    high = [hi - v for v, (_, hi) in zip(values, intervals, strict=True)]
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.bar(names, values, yerr=[low, high], capsize=4, color="#4c72b0")
    ax.axhline(PAPER_REFERENCE, color="#c44e52", linestyle="--", linewidth=1, label="Park et al. 2024 (0.85)")
    ax.set_ylabel("normalized accuracy")
    ax.legend(loc="lower right", fontsize=8)
    ax.tick_params(axis="x", labelrotation=20)
    return _png(fig)


def item_plot(summary: dict[str, Any]) -> str:
    """Accuracy by item for each condition beside people's own retest rate."""
    items = list(summary["items"])
    conditions = sorted({c for per in summary["items"].values() for c in per})
    fig, ax = plt.subplots(figsize=(max(6, 0.32 * len(items)), 3.6))
    width = 0.8 / max(1, len(conditions))
    for offset, condition in enumerate(conditions):
        xs = [i + offset * width for i in range(len(items))]
        ax.bar(xs, [summary["items"][k].get(condition, 0) for k in items], width, label=condition)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(items))], items, rotation=90, fontsize=7)
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=7, ncol=3)
    return _png(fig)


def parity_plot(summary: dict[str, Any]) -> str:
    """Demographic Parity Difference of normalized accuracy, by subgroup and condition."""
    conditions = list(summary["parity"])
    keys = list(next(iter(summary["parity"].values()), {}))
    fig, ax = plt.subplots(figsize=(6, 3.2))
    width = 0.8 / max(1, len(conditions))
    for offset, condition in enumerate(conditions):
        xs = [i + offset * width for i in range(len(keys))]
        ax.bar(xs, [summary["parity"][condition][k]["dpd"] or 0 for k in keys], width, label=condition)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(keys))], keys)
    ax.set_ylabel("DPD (lower is fairer)")
    ax.legend(fontsize=7)
    return _png(fig)


STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0;max-width:100%;font-size:.92em}"
    "td,th{border:1px solid #ccc;padding:4px 6px;text-align:right;overflow-wrap:anywhere}"
    "th{background:#f3f3f3}img{max-width:100%}.note{color:#555;font-size:.9em}"
    "small{color:#555}.warning{border:2px solid #c44e52;background:#fff3f3;padding:.6em 1em;margin:1em 0}"
)


def _conditionstable(summary: dict[str, Any]) -> str:
    rows = [
        [name, c["people"], with_interval(c["accuracy"], c["accuracy_ci"]), c["self_consistency"],
         with_interval(c["normalized_accuracy"], c["normalized_accuracy_ci"]), c["correlation"], c["self_correlation"]]
        for name, c in summary["conditions"].items()
    ]  # fmt: skip
    headers = ["condition", "people", "accuracy [95%]", "retest", "normalized [95%]", "correlation", "retest corr."]
    return table(headers, rows, raw=(2, 4))


def _sensitivity_section(summary: dict[str, Any]) -> str:
    checks = summary.get("sensitivity", {})
    rows = [
        [name, c.get("dispersion_ratio"), c.get("items_varying"),
         with_interval(c.get("shuffle_accuracy"), c.get("shuffle_interval")), c.get("accuracy"), c.get("p_value"),
         "no — flagged" if c.get("indistinguishable") else "yes"]
        for name, c in checks.items() if c.get("items")
    ]  # fmt: skip
    headers = ["condition", "dispersion ratio", "items varying", "shuffle accuracy [95%]", "accuracy", "p",
               "depends on the person"]  # fmt: skip
    return (
        "<h2>Do the answers depend on the person?</h2>"
        + table(headers, rows, raw=(3,))
        + "<p class='note'>Dispersion ratio: how much each item's answers vary across people (Gini–Simpson), over "
        "how much the people's own answers vary; 0 is the same answer for everyone. Shuffle control: the accuracy "
        "with each item's answers permuted across people; p is the share of permutations at least as accurate. "
        "The population-mode baseline is person-blind by construction.</p>"
    )


def _warnings(summary: dict[str, Any]) -> str:
    return "".join(f"<div class='warning'><strong>Warning.</strong> {html.escape(w)}</div>"
                   for w in summary.get("warnings", []))  # fmt: skip


def _parity_rows(summary: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for condition, per in summary["parity"].items():
        for key, part in per.items():
            groups = "; ".join(
                f"{g} {part['means'][g]:.2f} (n={n})" if g in part["means"] else f"{g} (n={n}, too few)"
                for g, n in part["counts"].items()
            )
            rows.append([condition, key, part["dpd"], groups])
    return rows


def length_points(summary: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(percent of the interview removed, the condition's figures), 0 being the whole interview."""
    conditions = summary["conditions"]
    points = [(0, conditions["interview"])] if "interview" in conditions else []
    points += [(p, conditions[f"ablated-{p}"]) for p in ABLATIONS if f"ablated-{p}" in conditions]
    return points if len(points) > 1 else []


def _length_section(summary: dict[str, Any]) -> str:
    """The interview-length curve: how much of the interview the agents' accuracy rests on."""
    points = length_points(summary)
    if not points:
        return ""
    fig, ax = plt.subplots(figsize=(5, 3))
    xs = [p for p, _ in points]
    ys = [c["normalized_accuracy"] or 0 for _, c in points]
    ax.plot(xs, ys, marker="o", color="#4c72b0")
    for x, (_, c) in zip(xs, points, strict=True):
        if c["normalized_accuracy_ci"]:
            ax.vlines(x, *c["normalized_accuracy_ci"], color="#4c72b0", alpha=0.5)
    ax.set_xlabel("share of the interview's turns removed (%)")
    ax.set_ylabel("normalized accuracy")
    rows = [[f"{p}%", c["people"], with_interval(c["normalized_accuracy"], c["normalized_accuracy_ci"])]
            for p, c in points]  # fmt: skip
    return (
        "<h2>Interview length</h2><p class='note'>The same people's agents with a seeded share of their interview's "
        "turns removed (and no reflections): how much of the interview the accuracy rests on.</p>"
        + f"<img alt='normalized accuracy by share of the interview removed' src='data:image/png;base64,{_png(fig)}'>"
        + table(["removed", "people", "normalized accuracy"], rows, raw=(2,))
    )


def _traits_section(summary: dict[str, Any]) -> str:
    """The Big Five traits and the games: correlation across people and mean absolute error, per condition."""
    traits = summary.get("traits")
    if not traits:
        return ""
    parts = ["<h2>Big Five and economic games</h2><p class='note'>Per trait (mean of its items, 1–5) and per game "
             "(0–1), across people: the correlation r with the first survey (normalized: divided by the people's "
             "own retest r), the mean absolute error and the mean shift from the people's own (on a game, below 0 "
             "is nearer the self-interested choice). population-mean: everyone else's mean.</p>"]  # fmt: skip
    for instrument, by_measure in traits.items():
        conditions = sorted({c for m in by_measure.values() for c in m["conditions"]})
        rows = []
        for name, m in by_measure.items():
            row = [name, m["people"], m["retest_r"], m["retest_mae"]]
            for c in conditions:
                got = m["conditions"].get(c, {})
                row += [got.get("r"), got.get("normalized_r"), got.get("mae"), got.get("shift")]
            rows.append(row)
        headers = ["measure", "people", "retest r", "retest MAE"]
        headers += [f"{c} {h}" for c in conditions for h in ("r", "norm. r", "MAE", "shift")]
        parts.append(f"<h3>{html.escape(instrument)}</h3>" + table(headers, rows))
    games = [s for s in summary.get("sentences", []) if " game " in s]
    if games:
        parts.append("<h3>Hyper-rationality</h3><ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in games) + "</ul>")
    return "".join(parts)


def _data_section(record: RunRecord) -> str:
    if not record.data_report:
        return ""
    lines = "".join(f"<li>{html.escape(line)}</li>" for line in record.data_report)
    return f"<h2>The data</h2><ul class='note'>{lines}</ul>"


def render_report(record: RunRecord, summary: dict[str, Any]) -> str:
    """The HTML report of one run: provenance, warnings, the summary, person sensitivity and plots."""
    config = "; ".join(f"{k}={v}" for k, v in record.config.items())
    provenance: list[list[Any]] = [
        ["run", record.run_id], ["dataset digest", record.dataset_digest[:16]], ["model", record.model],
        ["prompt version", record.prompt_version], ["configuration", config],
        ["people × items", f"{len(record.people)} × {len(record.items)}"], ["tokens", summary.get("tokens")],
        ["wall time (s)", record.wall_seconds], ["started", record.started_at], ["finished", record.finished_at],
    ]  # fmt: skip
    least = summary.get("parity_min_group", 1)
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Evaluation {html.escape(record.run_id)}"
        f"</title><style>{STYLE}</style></head><body><h1>Evaluation {html.escape(record.run_id)}</h1>"
        + _warnings(summary)
        + table(["", ""], provenance)
        + _data_section(record)
        + "<h2>By condition</h2>"
        + _conditionstable(summary)
        + "<p class='note'>Accuracy is against each person's wave-1 answers; normalized accuracy divides it by the "
        "person's own wave-2 repeat rate on the same items, then averages over people. Intervals: 95% bootstrap "
        "over people. A model is good where it beats the baselines on the same people, not where it passes 0.85.</p>"
        + f"<img alt='normalized accuracy by condition' src='data:image/png;base64,{normalized_plot(summary)}'>"
        + combination_section(summary)
        + _sensitivity_section(summary)
        + distortions_section(summary)
        + fidelity_section(summary)
        + _length_section(summary)
        + _traits_section(summary)
        + "<h2>By item</h2>"
        + f"<img alt='accuracy by item' src='data:image/png;base64,{item_plot(summary)}'>"
        + "<h2>Parity by subgroup</h2>"
        + f"<p class='note'>Only groups of at least {least} scored people enter a gap; smaller ones are listed "
        "with their size and left out.</p>"
        + f"<img alt='demographic parity difference' src='data:image/png;base64,{parity_plot(summary)}'>"
        + table(["condition", "subgroup", "DPD", "mean normalized accuracy by group"], _parity_rows(summary))
        + "</body></html>"
    )


def render_comparison(runs: Sequence[tuple[RunRecord, dict[str, Any]]]) -> str:
    """Several runs side by side: each condition's normalized accuracy, accuracy, correlation, spread and
    fidelity (total variation from the people's own) per run, and the tokens each run used."""
    rows = []
    for record, summary in runs:
        tokens = summary.get("tokens", {})
        used = f"{tokens.get('prompt', 0)} + {tokens.get('completion', 0)}"
        for name, c in summary["conditions"].items():
            shuffle = summary.get("sensitivity", {}).get(name, {}).get("shuffle_accuracy")
            found = (summary.get("distortions") or {}).get(name, {})
            tvd = ((summary.get("fidelity") or {}).get("against_people") or {}).get(name) or {}
            rows.append([record.run_id, record.model, record.prompt_version, name, c["people"], c["accuracy"], shuffle,
                         with_interval(c["normalized_accuracy"], c["normalized_accuracy_ci"]),
                         _value(found.get("correlation")), _value(found.get("spread")), _value(tvd.get("tvd")),
                         used])  # fmt: skip
    headers = ["run", "model", "prompt", "condition", "people", "accuracy", "shuffle accuracy", "normalized [95%]",
               "correlation", "spread", "TVD", "tokens (prompt + completion)"]  # fmt: skip
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Runs compared</title>"
        f"<style>{STYLE}</style></head><body><h1>Runs compared</h1>{table(headers, rows, raw=(7,))}</body></html>"
    )


def _value(figure: dict[str, Any] | None) -> float | None:
    return figure["value"] if figure else None
