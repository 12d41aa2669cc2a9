"""How a command's ``--dry-run`` prints its estimate: what the work would cost, asking no model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from app.cli.common import console

if TYPE_CHECKING:
    from agentbank.consultation.answering.costs import Estimate


def print_estimate(estimate: Estimate, what: str) -> None:
    """The estimate as a table, then what it rests on; nothing was asked, queued or written."""
    table = Table(title=f"estimate for {what} (dry run: nothing asked or queued)")
    table.add_column("")
    table.add_column("estimate", justify="right")
    price = "—" if estimate.price is None else f"{estimate.price:.4f} {estimate.currency or ''}".strip()
    seconds = "—" if estimate.seconds is None else f"{estimate.seconds:.0f} s"
    for name, value in (
        ("model", estimate.model),
        ("answers (already stored)", f"{estimate.answers} ({estimate.answers_stored})"),
        ("calls", str(estimate.calls)),
        ("prompt tokens (cached)", f"{estimate.prompt_tokens} ({estimate.cached_tokens})"),
        ("completion tokens", str(estimate.completion_tokens)),
        ("price", price),
        (f"wall time at {estimate.calls_in_flight} call(s) in flight", seconds),
    ):
        table.add_row(name, value)
    console.print(table)
    for note in estimate.notes:
        console.print(f"note: {note}")
