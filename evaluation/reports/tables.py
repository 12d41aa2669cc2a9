"""HTML tables of a report: figures formatted alike, with their intervals in the same cell."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any


def fmt(value: Any) -> str:
    """A figure as a cell shows it: three decimals, a pair as an interval, anything else escaped."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return f"[{value[0]:.3f}, {value[1]:.3f}]"
    return html.escape(str(value))


def with_interval(value: float | None, interval: Sequence[float] | None) -> str:
    """A figure and its interval in one cell, so that the table stays narrow enough for a page."""
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" <small>[{interval[0]:.3f}, {interval[1]:.3f}]</small>" if interval else "")


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], raw: Sequence[int] = ()) -> str:
    """An HTML table; the columns in ``raw`` hold markup made here, the rest is escaped."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{v if i in raw else fmt(v)}</td>" for i, v in enumerate(row)) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
