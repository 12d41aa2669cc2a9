"""The ``agentbank`` command line.

A command's module is imported when that command runs, not every module for every command: the whole
bank (the experiments' statistics, the batch API's client, the web application) takes several seconds to
import, and ``agentbank db current`` has no use for any of it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Sequence

import typer
from sqlalchemy.exc import SQLAlchemyError

from agentbank.core.errors import AgentBankError
from app.cli.common import cli as _cli
from app.cli.common import errors

# The module that registers each command (tests/app/test_cli_lazy.py checks this against every command).
COMMANDS = {
    "agents": "status", "ask": "agents", "audit": "audit", "backup": "backup", "build": "agents",
    "clients": "service", "compare-runs": "evaluate", "db": "system", "demo": "agents", "doctor": "system",
    "evaluate": "evaluate", "experiment": "experiment", "ingest": "agents", "interview": "interview",
    "keys": "privacy", "models": "system", "population": "population", "release": "privacy", "restore": "backup",
    "serve": "service", "status": "status", "study": "study", "survey": "agents", "validity": "validity",
    "witness": "witness", "worker": "service",
}  # fmt: skip
MODULES = tuple(sorted(set(COMMANDS.values())))


def register(modules: Iterable[str] = MODULES) -> typer.Typer:
    """The command line with the commands of ``modules`` (by default every one) registered."""
    for module in modules:
        importlib.import_module(f"app.cli.{module}")
    return _cli


def command_named(args: Sequence[str]) -> str | None:
    """The command ``args`` ask for: the first word that is not an option of the command line itself."""
    return next((arg for arg in args if not arg.startswith("-")), None)


def __getattr__(name: str) -> typer.Typer:
    # ``from app.cli import cli``: the whole command line, as its help and the tests see it.
    if name == "cli":
        return register()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Run the command line; the bank's own errors print as one readable line, not a traceback."""
    command = command_named(sys.argv[1:])
    # An unknown command, or none, lists them all.
    cli = register([COMMANDS[command]] if command in COMMANDS else MODULES)
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
