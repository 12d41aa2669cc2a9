"""The report's sections on what a run found beyond accuracy: the combination beside the best baseline,
the distortions of each condition beside the people's own retest, and the fidelity of its aggregates."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from evaluation.reports.tables import table, with_interval
from evaluation.scoring.findings import SENTENCE


def _cell(figure: Mapping[str, Any] | None) -> str:
    return with_interval(figure["value"], figure.get("interval")) if figure else "—"


def _said(summary: dict[str, Any], prefix: str) -> str:
    lines = [s for s in summary.get("sentences", []) if s.startswith(prefix)]
    return "".join(f"<li>{html.escape(s)}</li>" for s in lines)


def combination_section(summary: dict[str, Any]) -> str:
    """The combination's plain sentence, where the run has one."""
    if "combination" not in summary:
        return ""
    return (
        "<h2>The combination</h2><p class='note'>combined: item by item, a default source (the population's mode "
        "unless another is clearly better over all items), or another baseline or the best agent condition where it "
        "beat the default on the item, on other people, by at least two standard errors "
        "(cross-fitted in folds: nobody's own answers choose what they are served). Below, the gain per person, "
        "paired, with a 95% bootstrap interval.</p>"
        f"<ul>{_said(summary, SENTENCE)}</ul>"
    )


def distortions_section(summary: dict[str, Any]) -> str:
    """Correlation, spread, stereotyping and ideological shift per condition, beside the people's retest."""
    found = summary.get("distortions") or {}
    if not found:
        return ""
    rows = []
    for name, d in found.items():
        ideology = d.get("ideology")
        groups = "; ".join(f"{g} {v['value']:+.3f} (n={v['people']})" for g, v in (ideology or {}).get(
            "by_ideology", {}).items() if v)  # fmt: skip
        rows.append([name, d["people"], d["items"], _cell(d.get("correlation")), _cell(d.get("spread")),
                     _cell(d.get("stereotyping")), _cell(ideology), groups or None])  # fmt: skip
    headers = ["condition", "people", "items", "correlation r [95%]", "spread ratio [95%]", "stereotyping [95%]",
               "ideological shift [95%]", "shift by the people's ideology"]  # fmt: skip
    sentences = "".join(f"<li>{html.escape(s)}</li>" for s in summary.get("sentences", [])
                        if any(s.startswith(f"{n}:") for n in found) and " game " not in s
                        and "away from" not in s)  # fmt: skip
    return (
        "<h2>Distortions</h2>"
        + table(headers, rows, raw=(3, 4, 5, 6))
        + "<p class='note'>Per item across people: the correlation of the condition's answers with the people's "
        "(mean through Fisher's z; 0 where it gives everyone one answer) and its variance over theirs (spread; below 1 "
        "is too little individuation; a categorical item's variance is its Gini–Simpson impurity). Stereotyping: the "
        "share of its answers equal to the person's demographic cell mode less the share of the people's own. "
        "Ideological shift: on items whose answers follow the people's own ideology, its answer less the person's "
        "on 0–1, 1 the conservative end. retest: the people's own second answers, scored alike. Intervals: 95% "
        f"bootstrap over people.</p><ul>{sentences}</ul>"
    )


def fidelity_section(summary: dict[str, Any]) -> str:
    """Total variation and Jensen–Shannon divergence of each condition's distributions, per item averaged."""
    found = summary.get("fidelity") or {}
    if not found.get("against_people"):
        return ""
    parts = ["<h2>Fidelity of aggregates</h2>"]
    for key, against in (("against_people", "the people's own first answers"),
                         ("against_reference", found.get("reference"))):  # fmt: skip
        figures = found.get(key) or {}
        rows = [[name, f["items"], _cell(f["tvd"]), _cell(f["jsd"])] for name, f in figures.items() if f]
        if rows:
            parts.append(f"<h3>Against {html.escape(str(against))}</h3>"
                         + table(["condition", "items", "total variation [95%]", "Jensen–Shannon [95%]"], rows,
                                 raw=(2, 3)))  # fmt: skip
    weights = "weighted by the data's weights" if found.get("weights") else "unweighted (the data carry no weights)"
    parts.append(
        "<p class='note'>Per item, the distance between the distribution of the condition's answers and the "
        f"population's, {weights}, averaged over items: total variation (the largest share any answer is over- or "
        "under-stated by) and the Jensen–Shannon divergence in bits (0 identical, 1 disjoint). A distance is never "
        "below 0, so with few people its bootstrap interval sits above its value.</p>"
        f"<ul>{''.join(f'<li>{html.escape(s)}</li>' for s in summary.get('sentences', []) if 'away from' in s)}</ul>"
    )
    return "".join(parts)
