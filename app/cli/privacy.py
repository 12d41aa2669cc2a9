"""Commands that keep the bank's promises to participants: open-tier releases and the keyring."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from app.cli.common import cli, console, load_settings, open_bank, operator

release_cli = typer.Typer(
    help="Releases of the open tier: protected snapshots its tables come from.", no_args_is_help=True
)
keys_cli = typer.Typer(help="The keyring that wraps participants' data keys.", no_args_is_help=True)
cli.add_typer(release_cli, name="release")
cli.add_typer(keys_cli, name="keys")


@release_cli.command("status")
def release_status() -> None:
    """The release in force, what it cost, and when the next may be cut."""
    from rich.table import Table

    from agentbank.db import transaction
    from agentbank.publication.releases import current_release, pending_release, release_count
    from agentbank.runtime.demo_settings import release_policy

    settings = load_settings()
    with open_bank(settings, models=False) as bank, transaction(bank.sessions) as session:
        policy = release_policy(session, settings)  # the demo's, for a bank of fictional people only
        release = current_release(session)
        _, pending = pending_release(session, bank.keys, policy)
        reason = pending.blocker(policy)
        releases = release_count(session)
    table = Table("release", "cut at", "agents (with noise)", "mu per answer", "releases so far", "next release")
    table.add_row(
        str(release.id) if release else "none",
        release.cut_at.isoformat(timespec="seconds") if release else "—",
        str(release.agents) if release else "0",
        f"{release.mu:g}" if release else f"{policy.budget.mu:g}",
        str(releases),
        reason or "may be cut now",
    )
    console.print(table)
    console.print(
        f"Each release protects each answer at mu = {policy.budget.mu:g} (Gaussian differential privacy); a member "
        f"takes part in at most {policy.budget.releases_per_member()} releases (lifetime mu "
        f"{policy.budget.lifetime_mu:g}), then is left out of later ones"
        + (f" ({pending.left_out} already are)." if pending.left_out else ".")
    )
    if policy.demo:
        console.print(
            f"[yellow]demo settings:[/] the bank holds only the demo's fictional people, so its releases are cut at "
            f"k = {policy.k} and mu = {policy.budget.mu:g}, which protect almost nothing; once a real interview joins, "
            f"the bank's own settings apply (k = {settings.suppression_k}, mu = {settings.release_mu:g})"
        )


@release_cli.command("cut")
def release_cut(
    force: Annotated[
        bool, typer.Option(help="Cut now, without waiting for the interval since the last release (audited).")
    ] = False,
    wait: Annotated[float, typer.Option(help="Seconds to wait for a worker to cut it (0: only queue it).")] = 600,
) -> None:
    """Ask a worker to cut a new release (the release policy decides; --force skips only the wait)."""
    from agentbank.db import transaction
    from agentbank.publication.releases import current_release, cut_pending, request_cut

    settings = load_settings()
    with open_bank(settings, models=False) as bank:
        with transaction(bank.sessions) as session:
            before = current_release(session)
            request_cut(session, operator(), force=force)
        console.print("queued: a worker (`agentbank serve`'s, or `agentbank worker`) cuts it")
        deadline, taken = time.monotonic() + wait, False
        while wait and time.monotonic() < deadline:
            with transaction(bank.sessions) as session:
                if not cut_pending(session):
                    taken = True
                    after = current_release(session)
                    break
            time.sleep(1)
    if not wait:
        return
    if not taken:
        console.print("[yellow]no worker has cut it yet:[/] start one with `agentbank worker --burst`")
        raise typer.Exit(1)
    if after is None or (before is not None and after.id == before.id):
        console.print("[yellow]no release cut:[/] see `agentbank release status` for why")
        raise typer.Exit(1)
    console.print(f"cut release {after.id}: about {after.agents} agents, each answer protected at mu = {after.mu:g}")


@keys_cli.command("purge")
def keys_purge() -> None:
    """Destroy key-encryption keys that no stored data key needs (left by an interrupted withdrawal)."""
    from agentbank.db import transaction
    from agentbank.keys.rotation import purge_unused

    settings = load_settings()
    with open_bank(settings, models=False) as bank, transaction(bank.sessions) as session:
        destroyed = purge_unused(session, bank.keys)
    console.print(f"destroyed {len(destroyed)} unused key version(s)" + (f": {destroyed}" if destroyed else ""))
