"""``agentbank population``: the precomputed answers behind the open tier, by workers or by batch."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.common import cli, console, load_settings, open_bank, operator

if TYPE_CHECKING:  # the open tier's machinery is imported when a command runs, not for its --help
    from agentbank.core.settings import Settings
    from agentbank.providers.batch_api import BatchClient
    from agentbank.runtime.bank import Bank

POLL_S = 30.0
population_cli = typer.Typer(help="Precomputed answers behind the open tier.", no_args_is_help=True)
cli.add_typer(population_cli, name="population")


@population_cli.command("queue")
def population_queue(
    instrument: Annotated[str, typer.Option(help="gss, ipip50 or games.")] = "gss",
    items: Annotated[str | None, typer.Option(help="Comma-separated item keys; default the survey.")] = None,
    batch: Annotated[
        bool, typer.Option(help="Send the calls as one batch through the endpoint's Batch API (half the price).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Estimate calls, tokens, price and time; ask and queue nothing.")
    ] = False,
) -> None:
    """Queue every active agent to answer the items for the open tier; workers do the answering, or, with
    --batch, the endpoint's Batch API (then `agentbank population collect` stores the answers)."""
    from agentbank.db import transaction
    from agentbank.instruments import load_instrument, select_items
    from agentbank.instruments.gss import survey_items
    from agentbank.publication.batches import submit_population_batch
    from agentbank.publication.population import estimate_population, queue_population
    from app.cli.costs import print_estimate

    settings = load_settings()
    loaded = load_instrument(instrument, settings.reference_data_dir)
    if items:
        chosen = select_items(loaded, [k for k in items.split(",") if k.strip()])
    else:
        chosen = survey_items(loaded) if loaded.key == "gss" else list(loaded.items)
    if dry_run:
        with open_bank(settings, models=False) as bank, console.status("planning every agent's calls..."):
            estimate = estimate_population(bank.sessions, bank.planner, settings, loaded, chosen)
        if batch:
            estimate.notes.append("the endpoint's Batch API may charge less than the price above")
        print_estimate(estimate, f"{loaded.key} × {len(chosen)} item(s) for every active agent")
        return
    if batch:
        client, model = _batch_client(settings)
        planning = console.status("planning every agent's calls and sending the batch...")
        with open_bank(settings) as bank, planning:
            sent = submit_population_batch(bank.sessions, bank.door, client, model, loaded, chosen, operator())
        console.print(
            f"batch {sent.id}: {sent.requests} request(s) for {len(sent.agent_ids)} agent(s) × {len(chosen)} "
            "item(s); `agentbank population collect --wait` stores the answers when the endpoint has them"
        )
        return
    with open_bank(settings, models=False) as bank, transaction(bank.sessions) as session:
        agents = queue_population(session, loaded, chosen, operator())
    console.print(f"queued {agents} agent(s) × {len(chosen)} item(s); run `agentbank worker` to answer them")


@population_cli.command("collect")
def population_collect(
    batch: Annotated[str | None, typer.Option(help="One batch's id; default every batch still at work.")] = None,
    wait: Annotated[bool, typer.Option(help=f"Look again every {POLL_S:.0f} s until every batch ended.")] = False,
) -> None:
    """Store and release the answers of finished batches; run it again (or with --wait) until they end."""
    settings = load_settings()
    client, _ = _batch_client(settings)
    with open_bank(settings) as bank:
        while True:
            waiting = _collect_all(bank, client, uuid.UUID(batch) if batch else None)
            if not waiting or not wait:
                break
            time.sleep(POLL_S)


def _collect_all(bank: Bank, client: BatchClient, only: uuid.UUID | None) -> int:
    """One look at every batch at work; how many are still at work."""
    from sqlalchemy import select

    from agentbank.consultation.door import AgentDoor
    from agentbank.core.statuses import BatchStatus
    from agentbank.db.models import ModelBatch
    from agentbank.providers.chat import ChatModel
    from agentbank.publication.batches import collect_batch

    with bank.sessions() as session:
        query = select(ModelBatch.id).where(ModelBatch.status == BatchStatus.SUBMITTED)
        ids = [only] if only else list(session.scalars(query.order_by(ModelBatch.created_at)))
    embedder = bank.require_models()[1]

    def door_for(chat: ChatModel) -> AgentDoor:
        return AgentDoor(chat=chat, embedder=embedder, keys=bank.keys,
                         memory_token_budget=bank.settings.memory_token_budget)  # fmt: skip

    waiting = 0
    for batch_id in ids:
        row = collect_batch(bank.sessions, client, door_for, batch_id, bank.settings.reference_data_dir)
        if row.status == BatchStatus.SUBMITTED:
            waiting += 1
            console.print(f"batch {row.id}: {row.provider_status} at the endpoint")
        elif row.status == BatchStatus.COLLECTED:
            console.print(f"batch {row.id}: answers of {row.answered} agent(s) released, {row.failed} left out")
        else:
            console.print(f"[yellow]batch {row.id}: {row.provider_status}[/]; queue the items again")
    if not ids:
        console.print("no batch is at work")
    return waiting


def _batch_client(settings: Settings) -> tuple[BatchClient, str]:
    from agentbank.core.errors import ConfigurationError
    from agentbank.providers.batch_api import BatchClient

    if settings.chat_provider != "openai" or settings.chat_model is None:
        raise ConfigurationError(
            "batches go through a remote endpoint's Batch API", hint="set AGENTBANK_CHAT_PROVIDER=openai"
        )
    key = settings.chat_api_key.get_secret_value() if settings.chat_api_key else None
    return BatchClient(base_url=settings.chat_base_url, api_key=key), settings.chat_model
