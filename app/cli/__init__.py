"""The ``agentbank`` command line."""

from __future__ import annotations

import sys

from sqlalchemy.exc import SQLAlchemyError

from agentbank.errors import AgentBankError
from app.cli import (  # noqa: F401 - registers the commands
    agents,
    audit,
    backup,
    evaluate,
    experiment,
    interview,
    population,
    privacy,
    service,
    status,
    study,
    system,
    validity,
    witness,
)
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
    except SQLAlchemyError as exc:
        # The statement and its parameters may hold participant data: name the error only.
        errors.print(f"[red]error:[/] the database refused the operation ({type(exc).__name__})")
        errors.print("[yellow]→ run `agentbank doctor` to check the database[/]")
        sys.exit(1)
