"""A release's table as rows and as a labelled table: the item's codes with their labels, every column
with what it holds, and the release and its protection in the file's own label."""

from __future__ import annotations

import pandas as pd

from agentbank.instruments.exports import LabelledTable
from agentbank.publication.breakdowns import BREAKDOWNS, FIGURES
from agentbank.publication.distributions import Distribution

FIGURE_LABELS = {
    "count": "People giving the answer, with the release's noise (missing: the group is hidden)",
    "share": "Share of the group, with the release's noise",
    "share_low": "Share: lower end of its 95% interval (noise included)",
    "share_high": "Share: upper end of its 95% interval (noise included)",
    "weighted_share": "Share weighted to the population's margins",
    "weighted_low": "Weighted share: lower end of its 95% interval",
    "weighted_high": "Weighted share: upper end of its 95% interval",
    "deff": "The group's design effect of the weights",
    "noise_low": "Share: lower end of its 95% interval from the release's noise alone",
    "noise_high": "Share: upper end of its 95% interval from the release's noise alone",
    "sampling_low": "Share: lower end of its 95% sampling interval (as if the counts were exact)",
    "sampling_high": "Share: upper end of its 95% sampling interval (as if the counts were exact)",
}


def table_rows(result: Distribution) -> list[list[object]]:
    """One row per cell: its group, code, label and ``FIGURES`` (None where hidden or not weighted)."""
    deff = {tuple(g["group"].values()): g["deff"] for g in result.groups}
    rows = []
    for c in result.cells:
        low, high = c.interval or (None, None)
        w_low, w_high = c.weighted_interval or (None, None)
        n_low, n_high = c.noise_interval or (None, None)
        s_low, s_high = c.sampling_interval or (None, None)
        deff_of = deff[tuple(c.group.values())] if c.count is not None else None
        figures = [c.count, c.share, low, high, c.weighted_share, w_low, w_high, deff_of, n_low, n_high, s_low, s_high]
        rows.append([*c.group.values(), c.code, c.label, *figures])
    return rows


def labelled_table(result: Distribution) -> LabelledTable:
    """The CSV's columns, the item's codes carrying their labels (``code``) and each column its meaning."""
    frame = pd.DataFrame(table_rows(result), columns=[*result.breakdowns, "code", "label", *FIGURES])
    frame["code"] = frame["code"].astype("Int64")
    frame["count"] = frame["count"].astype("Int64")
    for column in FIGURES[1:]:
        frame[column] = frame[column].astype("Float64")
    variable_labels = {b: BREAKDOWNS[b].title or b for b in result.breakdowns}
    variable_labels.update(code=result.question, label="The answer's label", **FIGURE_LABELS)
    mu = result.protection.get("mu")
    protected = f", mu {mu} per answer" if mu is not None else ""
    return LabelledTable(
        frame,
        variable_labels,
        {"code": {cell.code: cell.label for cell in result.cells}},
        f"{result.instrument} {result.item}, release {result.release}{protected}",
    )
