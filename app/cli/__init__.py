"""The ``agentbank`` command line."""

from __future__ import annotations

import sys

from agentbank.errors import AgentBankError
from app.cli import agents, system  # noqa: F401 - registers the commands
from app.cli.common import cli, errors


def main() -> None:
    """Run the command line; the bank's own errors print as one readable line, not a traceback."""
    try:
        cli()
    except AgentBankError as exc:
        errors.print(f"[red]error:[/] {exc.message}")
        if exc.hint:
            errors.print(f"[yellow]→ {exc.hint}[/]")
        sys.exit(1)
