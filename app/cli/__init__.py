"""The ``agentbank`` command line.

A command's module is imported when that command runs, not every module for every command: the whole
bank (the experiments' statistics, the batch API's client, the web application) takes several seconds to
import, and ``agentbank db current`` has no use for any of it. The list of commands (``agentbank --help``,
or a mistyped command) comes from the table below, so it imports no command's module at all; each module
imports what its commands run only when they run, so that a command's own ``--help`` answers at once too.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

from app.cli.common import cli as _cli
from app.cli.common import errors


class Entry(NamedTuple):
    """A command as the list shows it: the module that registers it, and its help's first paragraph."""

    module: str
    help: str


# Every command in the order the list shows them (tests/app/cli/test_lazy.py checks each module and help
# against the command itself, so the table cannot drift from the commands).
COMMANDS = {
    "serve": Entry("service", "Run the HTTP API (docs at /docs); with the embedded defaults a worker runs alongside."),
    "worker": Entry("service",
        "Take queued tasks (job answers, population answers); run as many as you like, anywhere."),
    "demo": Entry("agents", "Build a small bank (the demo's fictional people) and survey it on five GSS items."),
    "ingest": Entry("agents", "Store interviews as participants with encrypted, final transcripts (all or nothing)."),
    "build": Entry("agents",
        "Build agents (reflections and embeddings) for every participant without a current one; resumable."),
    "status": Entry("status", "Builds queued, running and failed (with the reason), and agents by status."),
    "agents": Entry("status",
        "Every active agent: its pseudonym (what `ask` and `survey --agents` take), version, and report card."),
    "ask": Entry("agents", "Ask one agent an open-ended question; the answer cites the interview turns it draws on."),
    "survey": Entry("agents",
        "Survey agents on an instrument; print a table and, with --csv, write it in the instrument's codes."),
    "interview": Entry("interview", "Interviews: invitations, and the interview itself in the terminal."),
    "study": Entry("study", "Studies: invite a cohort, follow each participant's stage, remind for the retest."),
    "evaluate": Entry("evaluate",
        "Score agents against people's own answers, beside the baselines; the same command resumes a run."),
    "compare-runs": Entry("evaluate", "Put finished evaluation runs side by side in one HTML page."),
    "validity": Entry("validity",
        "How well the bank's agents speak for their people: surveys, retests, report cards, the newest scoring."),
    "experiment": Entry("experiment", "Published experiments on agents, beside the people's results."),
    "population": Entry("population", "Precomputed answers behind the open tier."),
    "release": Entry("privacy", "Releases of the open tier: protected snapshots its tables come from."),
    "keys": Entry("privacy", "The keyring that wraps participants' data keys."),
    "clients": Entry("service", "OAuth2 clients of the API."),
    "audit": Entry("audit", "The tamper-evident audit log."),
    "witness": Entry("witness", "An independent witness that cosigns a log's tree heads (c2sp.org/tlog-witness)."),
    "backup": Entry("backup", "Back up the database (pg_dump) and the audit heads; never the keyring."),
    "restore": Entry("backup",
        "Replace the bank's database with a backup, then re-apply every withdrawal recorded since."),
    "doctor": Entry("system",
        "Check every component on this machine: database, pgvector, chat model, embedder, speech."),
    "db": Entry("system", "The database: migrations and status."),
    "models": Entry("system", "Local model packages."),
}  # fmt: skip
MODULES = tuple(sorted({entry.module for entry in COMMANDS.values()}))


def register(modules: Iterable[str] = MODULES) -> typer.Typer:
    """The command line with the commands of ``modules`` (by default every one) registered."""
    for module in modules:
        importlib.import_module(f"app.cli.{module}")
    return _cli


def command_named(args: Sequence[str]) -> str | None:
    """The command ``args`` ask for: the first word that is not an option of the command line itself."""
    return next((arg for arg in args if not arg.startswith("-")), None)


def listed(group: TyperGroup) -> TyperGroup:
    """``group`` with every command of the table, in the table's order; one whose module is not imported is
    named by the table alone (it is only listed: ``main`` imports the module of a command that runs)."""
    registered = dict(group.commands)
    group.commands = {
        name: registered.pop(name) if name in registered else TyperCommand(name, help=entry.help)
        for name, entry in COMMANDS.items()
    } | registered
    return group


def __getattr__(name: str) -> typer.Typer:
    # ``from app.cli import cli``: the whole command line, as its help and the tests see it.
    if name == "cli":
        return register()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Run the command line; the bank's own errors print as one readable line, not a traceback."""
    command = command_named(sys.argv[1:])
    # An unknown command, or none, lists them all from the table, importing none of their modules.
    known = command is not None and command in COMMANDS
    group = typer.main.get_command(register([COMMANDS[command].module] if command is not None and known else ()))
    assert isinstance(group, TyperGroup)  # the command line has subcommands
    if not known:
        listed(group)
    try:
        group()
    except Exception as exc:
        _exit_on_bank_error(exc)
        raise


def _exit_on_bank_error(exc: Exception) -> None:
    """Print the bank's own errors, and the database's, as a line and a hint, and exit; others go on."""
    from sqlalchemy.exc import SQLAlchemyError  # loaded by then wherever a database was used

    from agentbank.core.errors import AgentBankError

    if isinstance(exc, AgentBankError):
        errors.print(f"[red]error:[/] {exc.message}")
        if exc.hint:
            errors.print(f"[yellow]→ {exc.hint}[/]")
        sys.exit(1)
    if isinstance(exc, SQLAlchemyError):
        # The statement and its parameters may hold participant data: name the error only.
        errors.print(f"[red]error:[/] the database refused the operation ({type(exc).__name__})")
        errors.print("[yellow]→ run `agentbank doctor` to check the database[/]")
        sys.exit(1)
