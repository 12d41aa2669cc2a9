"""Commands that keep the bank's promises to participants: open-tier releases and the keyring."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from agentbank.audit import log as audit
from agentbank.db import transaction
from agentbank.instruments import load_instrument
from agentbank.keys.rotation import purge_unused
from agentbank.open_tier.releases import cut_release, pending_changes
from agentbank.open_tier.weighting.targets import load_targets
from app.cli.common import cli, console, load_settings
from app.opening import open_bank

release_cli = typer.Typer(
    help="Releases of the open tier: frozen populations its tables come from.", no_args_is_help=True
)
keys_cli = typer.Typer(help="The keyring that wraps participants' data keys.", no_args_is_help=True)
cli.add_typer(release_cli, name="release")
cli.add_typer(keys_cli, name="keys")

OPERATOR = audit.Actor("operator", "cli")


@release_cli.command("status")
def release_status() -> None:
    """The release in force and what changed since (a new one waits until the policy allows)."""
    settings = load_settings()
    with open_bank(settings, models=False) as bank, transaction(bank.sessions) as session:
        release, _, changes = pending_changes(session)
        reason = changes.blocker(settings.suppression_k)
    table = Table("release", "cut at", "agents", "joined since", "left since", "next release")
    table.add_row(
        str(release.id) if release else "none",
        release.cut_at.isoformat(timespec="seconds") if release else "—",
        str(release.agents) if release else "0",
        str(changes.joined),
        str(changes.left),
        reason or "may be cut now",
    )
    console.print(table)


@release_cli.command("cut")
def release_cut(
    force: Annotated[
        bool, typer.Option(help="Cut even if fewer than k agents joined or left (weakens the guarantee; audited).")
    ] = False,
) -> None:
    """Cut a new release if at least k agents joined or left since the last (none of either, otherwise)."""
    settings = load_settings()
    with open_bank(settings, models=False) as bank, transaction(bank.sessions) as session:
        outcome = cut_release(
            session, lambda key: load_instrument(key, settings.reference_data_dir), settings.suppression_k, OPERATOR,
            force=force, targets=load_targets(settings.weight_targets),
        )  # fmt: skip
    if outcome.release is None:
        console.print(f"[yellow]no release cut:[/] {outcome.reason}")
        raise typer.Exit(1)
    console.print(f"cut release {outcome.release.id}: {outcome.release.agents} agents "
                  f"({outcome.changes.joined} joined, {outcome.changes.left} left)")  # fmt: skip


@keys_cli.command("purge")
def keys_purge() -> None:
    """Destroy key-encryption keys that no stored data key needs (left by an interrupted withdrawal)."""
    settings = load_settings()
    with open_bank(settings, models=False) as bank, transaction(bank.sessions) as session:
        destroyed = purge_unused(session, bank.keys)
    console.print(f"destroyed {len(destroyed)} unused key version(s)" + (f": {destroyed}" if destroyed else ""))
