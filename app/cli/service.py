"""Service commands: the HTTP server, workers, OAuth2 clients."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.common import cli, console, database_starting, json_logs, load_settings, open_bank, operator

if TYPE_CHECKING:  # what the commands run is imported when they run, not for their --help
    from agentbank.providers.chat import ChatModel
    from agentbank.runtime.bank import Bank
    from agentbank.runtime.worker import Worker

clients_cli = typer.Typer(help="OAuth2 clients of the API.", no_args_is_help=True)
cli.add_typer(clients_cli, name="clients")

# agentbank.access.principals.SCOPES, as --help shows them (tests/app/cli/test_lazy.py checks it).
SCOPE_NAMES = "aggregate:read, projects:apply, individual:query, review, admin, studies"


def log_worker_progress() -> None:
    """Show the worker's progress (builds step by step) and its warnings, without the queue's tracebacks."""
    from rich.logging import RichHandler

    from agentbank.building.agents import BUILD_TASK

    def without_build_tracebacks(record: logging.LogRecord) -> bool:
        # The worker logs each failed build attempt itself, with its reason and a hint; the queue's own
        # record of it carries a traceback.
        job = getattr(record, "job", None)
        task = job.get("task_name") if isinstance(job, dict) else None
        return not (task == BUILD_TASK and getattr(record, "action", None) in {"job_error", "job_error_retry"})

    progress = logging.getLogger("agentbank.runtime.worker")
    progress.setLevel(logging.INFO)
    if not json_logs():  # JSON lines go on through the root handler, as every other record does
        progress.propagate = False
        progress.addHandler(RichHandler(console=console, show_path=False))
    logging.getLogger("procrastinate.worker").addFilter(without_build_tracebacks)


def refresh_validity(bank: Bank, chat: ChatModel) -> object:
    """The evaluation's scoring of the bank's agents, for the worker's refresh task (imported when one runs:
    the evaluation's statistics take a second to import, and a worker's first tasks need none of them)."""
    from evaluation.refresh import refresh_bank_validity

    return refresh_bank_validity(bank, chat)


@cli.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    worker: Annotated[bool, typer.Option(help="Run one worker in this process (the embedded default).")] = True,
    demo: Annotated[bool, typer.Option(help="On an empty bank, ingest the demo interviews and build them.")] = True,
) -> None:
    """Run the HTTP API (docs at /docs); with the embedded defaults a worker runs alongside."""
    import uvicorn

    from agentbank.core.errors import ConfigurationError
    from agentbank.db import transaction
    from agentbank.db.embedded import exit_on_sigterm
    from agentbank.runtime.demo import DEMO_ITEMS, seed_demo_bank
    from agentbank.runtime.demo_settings import DEMO_SETTINGS
    from app.api import create_app
    from app.cli import server_url
    from migrations.runner import migrate_database

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

            log_worker_progress()
            running = Worker(bank, refresh=refresh_validity)
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
    from agentbank.audit.sequencer import Sequencer

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
    settings = load_settings()
    with database_starting(settings):
        from agentbank.runtime.worker import Worker

    log_worker_progress()
    # Without the models: the worker loads them for its first task that needs one (a release, a checkpoint
    # and the queue's own upkeep need none), so that it takes its first tasks at once.
    with open_bank(settings, models=False) as bank:
        console.print("worker started; Ctrl-C to stop")
        Worker(bank, refresh=refresh_validity).run(wait=not burst)


@clients_cli.command("create")
def clients_create(
    name: Annotated[str, typer.Argument(help="Who the client is (a person, a team member, a service).")],
    scope: Annotated[list[str], typer.Option("--scope", help=f"Repeatable; among {SCOPE_NAMES}.")],
) -> None:
    """Create a client; its secret is shown once."""
    from agentbank.access import clients as client_service
    from agentbank.db import transaction

    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        created = client_service.create_client(session, name, scope, operator())
        client_id = created.client.client_id
    console.print(f"client_id:     {client_id}\nclient_secret: {created.secret}")
    console.print("[yellow]store the secret now: it is not kept and cannot be shown again[/]")


@clients_cli.command("list")
def clients_list() -> None:
    """Every client with its scopes and state."""
    from rich.table import Table

    from agentbank.access import clients as client_service
    from agentbank.access.principals import SCOPE_HELP

    with open_bank(load_settings(), models=False) as bank, bank.sessions() as session:
        table = Table("client_id", "name", "scopes", "status", "created")
        for c in client_service.list_clients(session):
            table.add_row(c.client_id, c.name, " ".join(c.scopes), c.status, f"{c.created_at:%Y-%m-%d %H:%M}")
    console.print(table)
    console.print("[dim]" + "; ".join(f"{k}: {v}" for k, v in SCOPE_HELP.items()) + "[/]")


@clients_cli.command("revoke")
def clients_revoke(client_id: Annotated[str, typer.Argument(help="The client to revoke.")]) -> None:
    """Revoke a client and all its tokens, effective on the next request."""
    from agentbank.access import clients as client_service
    from agentbank.db import transaction

    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        client_service.revoke_client(session, client_id, operator())
    console.print(f"revoked {client_id} and its tokens")


@clients_cli.command("link-person")
def clients_link_person(
    client_id: Annotated[str, typer.Argument(help="The client the person acts as.")],
    email: Annotated[str, typer.Argument(help="Their email address, as the identity provider verifies it.")],
) -> None:
    """Let a person sign in to the consoles (AGENTBANK_OIDC_ISSUER) as this client, with its scopes."""
    from agentbank.access import people
    from agentbank.db import transaction

    with open_bank(load_settings(), models=False) as bank, transaction(bank.sessions) as session:
        people.link_person(session, client_id, email, operator())
    console.print(f"{email.strip().lower()} may sign in as {client_id}")
