"""An experiment run's HTML report: one self-contained file, comparable across models and conditions."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt

from evaluation.reports.pages import STYLE, _png
from evaluation.reports.tables import table as _table
from evaluation.runs.records import RunRecord


def _d(effect: dict[str, Any] | None) -> str:
    if not effect or effect.get("d") is None:
        return "— <small>(no variation)</small>" if effect else "—"
    return f"{effect['d']:.2f} <small>[{effect['d_low']:.2f}, {effect['d_high']:.2f}]</small>"


def _p(effect: dict[str, Any] | None) -> str:
    if not effect or effect.get("p") is None:
        return "—"
    return f"{effect['test']} p = {effect['p']:.3g}"


def effects_plot(summary: dict[str, Any]) -> str | None:
    """Agents' d against the people's, one colour per condition and blinding, with the agents' intervals."""
    fig, ax = plt.subplots(figsize=(6, 4.5))
    drawn = 0
    for overall in summary["overall"]:
        xs, ys, errors = [], [], []
        for entry in summary["experiments"]:
            if not entry["human"]["comparable"]:
                continue
            for found in entry["results"]:
                effect = found.get("effect")
                if (found["condition"], found["blinding"]) != (overall["condition"], overall["blinding"]):
                    continue
                if effect and effect["d"] is not None:
                    xs.append(entry["human"]["d"])
                    ys.append(effect["d"])
                    errors.append([[effect["d"] - effect["d_low"]], [effect["d_high"] - effect["d"]]])
        if xs:
            drawn += 1
            yerr = [[e[0][0] for e in errors], [e[1][0] for e in errors]]
            ax.errorbar(xs, ys, yerr=yerr, fmt="o", capsize=3, label=f"{overall['condition']}, {overall['blinding']}")
    if not drawn:
        plt.close(fig)
        return None
    top = max(ax.get_xlim()[1], ax.get_ylim()[1])
    ax.plot([0, top], [0, top], color="#999", linestyle="--", label="agents = people")
    ax.set_xlabel("people's d (Park et al. 2024)")
    ax.set_ylabel("agents' d, 95% interval")
    ax.legend(fontsize=8)
    return _png(fig)


def render_report(record: RunRecord, summary: dict[str, Any]) -> str:
    """The whole report as one HTML document."""
    title = f"Experiments {html.escape(record.run_id)}"
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>{STYLE}</style></head><body><h1>{title}</h1>",
        f"<p class='note'>Model {html.escape(record.model)}, prompt version {html.escape(record.prompt_version)}, "
        f"{len(record.people)} agents, started {html.escape(record.started_at)}, "
        f"{record.wall_seconds:.0f} s of wall time. People's figures: Park et al. 2024, Table 1 (about 1,000 "
        "people); the agents there were GPT-4o. The stimuli are the bank's own wording of the published "
        "designs, not the replications' exact text.</p>",
    ]
    parts += [f"<div class='warning'><strong>Check.</strong> {html.escape(w)}</div>" for w in summary["warnings"]]
    parts.append("<h2>Across experiments</h2>")
    rows = [
        [
            o["condition"],
            o["blinding"],
            f"{o['same_conclusion']} of {o['experiments']}",
            o["r_with_people"],
            o["compared"],
            o["median_inflation"],
            o["no_variation"],
        ]
        for o in summary["overall"]
    ]
    headers = [
        "condition",
        "blinding",
        "same conclusion as people",
        "r with people's d",
        "experiments in r",
        "median inflation (agents' d / people's d)",
        "experiments without variation (no d, no test)",
    ]
    parts.append(_table(headers, rows))
    plot = effects_plot(summary)
    if plot:
        parts.append(f"<img alt='Agents' effect sizes against the people's' src='data:image/png;base64,{plot}'>")
    for entry in summary["experiments"]:
        parts.append(_experiment_section(entry))
    parts.append("</body></html>")
    return "".join(parts)


def _experiment_section(entry: dict[str, Any]) -> str:
    human = entry["human"]
    people = f"d = {human['d']:g}" + ("" if human["significant"] else " (not significant)")
    parts = [
        f"<h2>{html.escape(entry['title'])}</h2><p class='note'>{html.escape(entry['citation'])}. People: "
        f"{html.escape(people)}. {html.escape(human['note'])}</p>"
    ]
    rows, checks = [], []
    for found in entry["results"]:
        effect = found.get("effect")
        park = human["agents_d"].get(found["condition"])
        rows.append(
            [
                found["condition"],
                found["blinding"],
                f"{found['agents'] - found['excluded']}"
                + (f" <small>({found['excluded']} withdrawn)</small>" if found["excluded"] else ""),
                _d(effect) if "error" not in found else html.escape(found["error"]),
                _p(effect),
                "—" if park is None else f"{park:g}",
                found.get("inflation"),
                found.get("same_conclusion"),
            ]
        )
        for check in found.get("balance", []):
            checks.append(
                [
                    found["condition"],
                    found["blinding"],
                    check["probe"],
                    f"{check['arm']} − {check['reference']}",
                    _d(check),
                    "—" if check["p"] is None else f"{check['p']:.3g}",
                    check["flagged"],
                ]
            )
    headers = [
        "condition",
        "blinding",
        "agents",
        "agents' d [95%]",
        "test",
        "Park et al.'s agents' d",
        "inflation",
        "same conclusion",
    ]
    parts.append(_table(headers, rows, raw=(2, 3)))
    differs = entry.get("blinding_differs", {})
    if differs:
        parts.append(
            "<p>Blinded and unblinded estimates differ beyond their intervals: "
            + ", ".join(
                f"{html.escape(c)}: {'yes' if v else 'no' if v is not None else '—'}" for c, v in differs.items()
            )
            + "</p>"
        )
    if checks:
        parts.append("<h3>Balance checks on what the design left unstated</h3>")
        parts.append(_table(["condition", "blinding", "probe", "arms", "d [95%]", "p", "flagged"], checks, raw=(4,)))
    return "".join(parts)


def render_comparison(runs: Sequence[tuple[RunRecord, dict[str, Any]]]) -> str:
    """Finished experiment runs side by side: per model, condition and blinding, how the agents' effects
    stand against the people's, then each experiment's d."""
    keys = sorted({entry["key"] for _, summary in runs for entry in summary["experiments"]})
    headers = ["run", "model", "condition", "blinding", "agents", "same conclusion", "r with people's d",
               "median inflation", *(f"{key} d" for key in keys)]  # fmt: skip
    rows = []
    for record, summary in runs:
        for overall in summary["overall"]:
            cells = {}
            for entry in summary["experiments"]:
                for found in entry["results"]:
                    if (found["condition"], found["blinding"]) == (overall["condition"], overall["blinding"]):
                        cells[entry["key"]] = _d(found.get("effect"))
            rows.append([record.run_id, record.model, overall["condition"], overall["blinding"], len(record.people),
                         f"{overall['same_conclusion']} of {overall['experiments']}", overall["r_with_people"],
                         overall["median_inflation"], *(cells.get(key, "—") for key in keys)])  # fmt: skip
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Experiment runs compared</title>"
        f"<style>{STYLE}</style></head><body><h1>Experiment runs compared</h1>"
        f"{_table(headers, rows, raw=tuple(range(8, 8 + len(keys))))}</body></html>"
    )
