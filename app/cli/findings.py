"""What a run found beyond accuracy, as the terminal shows it: distortions, fidelity of aggregates, and the
combination and every figure in plain sentences (``evaluate`` and ``validity`` print the same)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.markup import escape
from rich.table import Table

from app.cli.common import console


def _cell(figure: Mapping[str, Any] | None, signed: bool = False) -> str:
    if not figure:
        return "—"
    interval = figure.get("interval")
    form = "{:+.3f}" if signed else "{:.3f}"
    text = form.format(figure["value"])
    return text + (f" [{form.format(interval[0])}, {form.format(interval[1])}]" if interval else "")


def distortions_table(distortions: Mapping[str, Any]) -> Table:
    """Per condition beside the people's retest: correlation, spread, stereotyping, ideological shift."""
    table = Table(title="distortions (95% intervals over people; retest: the people's own second answers)")
    for header in ("condition", "correlation r", "spread ratio", "stereotyping", "ideological shift"):
        table.add_column(header, justify="right")
    for name, d in distortions.items():
        table.add_row(name, _cell(d.get("correlation")), _cell(d.get("spread")),
                      _cell(d.get("stereotyping"), signed=True), _cell(d.get("ideology"), signed=True))  # fmt: skip
    return table


def fidelity_table(fidelity: Mapping[str, Any]) -> Table:
    """Per condition: mean total variation and Jensen–Shannon over items, against the people and the reference."""
    weighted = "weighted" if fidelity.get("weights") else "unweighted"
    table = Table(title=f"fidelity of aggregates (mean over items, {weighted})")
    table.add_column("condition", justify="right")
    columns = [("against_people", "the people's own")]
    if fidelity.get("against_reference"):
        columns.append(("against_reference", str(fidelity.get("reference", "the reference"))))
    for _, against in columns:
        table.add_column(f"TVD vs {against}", justify="right")
        table.add_column(f"JSD vs {against}", justify="right")
    names = list(dict.fromkeys(n for key, _ in columns for n in fidelity.get(key, {})))
    for name in names:
        cells = []
        for key, _ in columns:
            found = fidelity.get(key, {}).get(name)
            cells += [_cell(found and found["tvd"]), _cell(found and found["jsd"])]
        table.add_row(name, *cells)
    return table


def print_findings(summary: Mapping[str, Any]) -> None:
    """The distortions, the fidelity and every plain sentence of a run's summary, where it has them."""
    if summary.get("distortions"):
        console.print(distortions_table(summary["distortions"]))
    if (summary.get("fidelity") or {}).get("against_people"):
        console.print(fidelity_table(summary["fidelity"]))
    for sentence in summary.get("sentences", []):
        console.print(f"- {escape(sentence)}")
