"""Service commands: the HTTP server, workers, OAuth2 clients."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Annotated

import typer
from rich.logging import RichHandler
from rich.table import Table

from agentbank.access import clients as client_service
from agentbank.access import people
from agentbank.access.principals import SCOPE_HELP, SCOPES
from agentbank.audit import log as audit
from agentbank.audit.sequencer import Sequencer
from agentbank.building.agents import BUILD_TASK
from agentbank.core.errors import ConfigurationError
from agentbank.db import transaction
from agentbank.db.embedded import exit_on_sigterm
from agentbank.runtime.demo import DEMO_ITEMS, seed_demo_bank
from agentbank.runtime.demo_settings import DEMO_SETTINGS
from app.cli import server_url
from app.cli.common import cli, console, json_logs, load_settings
from app.opening import open_bank
from migrations.runner import migrate_database

if TYPE_CHECKING:  # the worker's queue is imported only by the commands that run one
    from agentbank.runtime.bank import Bank
    from agentbank.runtime.worker import Worker

clients_cli = typer.Typer(help="OAuth2 clients of the API.", no_args_is_help=True)
cli.add_typer(clients_cli, name="clients")

OPERATOR = audit.Actor("operator", "cli")


def _without_build_tracebacks(record: logging.LogRecord) -> bool:
    # The worker logs each failed build attempt itself, with its reason and a hint; the queue's own
    # record of it carries a traceback.
    job = getattr(record, "job", None)
    task = job.get("task_name") if isinstance(job, dict) else None
    return not (task == BUILD_TASK and getattr(record, "action", None) in {"job_error", "job_error_retry"})


def log_worker_progress() -> None:
    """Show the worker's progress (builds step by step) and its warnings, without the queue's tracebacks."""
    progress = logging.getLogger("agentbank.runtime.worker")
    progress.setLevel(logging.INFO)
    if not json_logs():  # JSON lines go on through the root handler, as every other record does
        progress.propagate = False
        progress.addHandler(RichHandler(console=console, show_path=False))
    logging.getLogger("procrastinate.worker").addFilter(_without_build_tracebacks)


@cli.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    worker: Annotated[bool, typer.Option(help="Run one worker in this process (the embedded default).")] = True,
    demo: Annotated[bool, typer.Option(help="On an empty bank, ingest the demo interviews and build them.")] = True,
) -> None:
    """Run the HTTP API (docs at /docs); with the embedded defaults a worker runs alongside."""
    import uvicorn

    from app.api import create_app

    settings = load_settings()
    with console.status("preparing the database..."):
        migrate_database(settings)
    with ExitStack() as stack:
        bank = stack.enter_context(open_bank(settings, models=worker))
        seeded = None
        try:
            with transaction(bank.sessions) as session:
                seeded = seed_demo_bank(session, bank.keys) if demo else None
        except ConfigurationError as exc:
            console.print(f"[yellow]no demo bank:[/] {exc}")
        if seeded:
            shown = DEMO_SETTINGS
            console.print(
                f"the bank was empty: ingested the demo's {seeded} fictional interviews and queued their agent "
                f"builds; the worker builds them now and answers {len(DEMO_ITEMS)} GSS items for the open tier. "
                f"While the bank holds only these fictional people, the open tier takes the demo's settings "
                f"(k = {shown.k}, mu = {shown.mu:g} per answer, answers sampled at temperature {shown.temperature:g}), "
                "never a real bank's"
            )
        running: Worker | None = None
        if worker:  # its sequencer chains the server's audit events too
            from agentbank.runtime.worker import Worker
            from evaluation.refresh import refresh_bank_validity

            log_worker_progress()
            running = Worker(bank, refresh=refresh_bank_validity)
            running.start_in_background()
        else:
            stack.enter_context(_sequencing(bank))
        console.print(f"serving on http://{host}:{port} (start at the front page; API docs at /docs); Ctrl-C to stop")
        served = server_url.remember(settings, host, port)  # so `interview invite` links to this port
        stack.callback(server_url.forget, settings, served)
        grace = settings.shutdown_grace_s
        exit_on_sigterm()  # uvicorn passes SIGTERM on after its own stop: as SystemExit, the stop below runs
        try:
            uvicorn.run(
                create_app(settings, bank), host=host, port=port, log_level="warning", proxy_headers=True,
                timeout_graceful_shutdown=max(1, round(grace)),
            )  # fmt: skip
        except KeyboardInterrupt:  # the server stopped on Ctrl-C and passes the signal on
            pass
        finally:
            # In order: the server has stopped; the worker stops before the models and the database close.
            if running is not None:
                running.stop(grace)
        console.print("stopped")


@contextmanager
def _sequencing(bank: Bank) -> Iterator[None]:
    """Chain the server's audit events while it serves (a worker does it where one runs beside it)."""
    sequencer = Sequencer.of(bank.sessions, bank.settings).start()
    try:
        yield
    finally:
        sequencer.stop()


@cli.command("worker")
def worker_command(
    burst: Annotated[bool, typer.Option(help="Stop when the queues are empty.")] = False,
) -> None:
    """Take queued tasks (job answers, population answers); run as many as you like, anywhere."""
    from agentbank.runtime.worker import Worker
    from evaluation.refresh import refresh_bank_validity

    settings = load_settings()
    log_worker_progress()
    with open_bank(settings) as bank:
        console.print("worker started; Ctrl-C to stop")
        Worker(bank, refresh=refresh_bank_validity).run(wait=not burst)


@clients_cli.command("create")
def clients_create(
    name: Annotated[str, typer.Argument(help="Who the client is (a person, a team member, a service).")],
    scope: Annotated[list[str], typer.Option("--scope", help=f"Repeatable; among {', '.join(SCOPES)}.")],
) -> None:
    """Create a client; its secret is shown once."""
    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        created = client_service.create_client(session, name, scope, OPERATOR)
        client_id = created.client.client_id
    console.print(f"client_id:     {client_id}\nclient_secret: {created.secret}")
    console.print("[yellow]store the secret now: it is not kept and cannot be shown again[/]")


@clients_cli.command("list")
def clients_list() -> None:
    """Every client with its scopes and state."""
    with open_bank(load_settings(), models=False) as bank, bank.sessions() as session:
        table = Table("client_id", "name", "scopes", "status", "created")
        for c in client_service.list_clients(session):
            table.add_row(c.client_id, c.name, " ".join(c.scopes), c.status, f"{c.created_at:%Y-%m-%d %H:%M}")
    console.print(table)
    console.print("[dim]" + "; ".join(f"{k}: {v}" for k, v in SCOPE_HELP.items()) + "[/]")


@clients_cli.command("revoke")
def clients_revoke(client_id: Annotated[str, typer.Argument(help="The client to revoke.")]) -> None:
    """Revoke a client and all its tokens, effective on the next request."""
    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        client_service.revoke_client(session, client_id, OPERATOR)
    console.print(f"revoked {client_id} and its tokens")


@clients_cli.command("link-person")
def clients_link_person(
    client_id: Annotated[str, typer.Argument(help="The client the person acts as.")],
    email: Annotated[str, typer.Argument(help="Their email address, as the identity provider verifies it.")],
) -> None:
    """Let a person sign in to the consoles (AGENTBANK_OIDC_ISSUER) as this client, with its scopes."""
    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        people.link_person(session, client_id, email, OPERATOR)
    console.print(f"{email.strip().lower()} may sign in as {client_id}")
