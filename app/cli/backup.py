"""``agentbank backup`` and ``agentbank restore``: a copy of the database that never brings a withdrawn person back."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli.common import cli, console, load_settings, open_bank, operator


@cli.command("backup")
def backup(
    destination: Annotated[Path, typer.Argument(help="A new (or empty) directory to write the backup into.")],
) -> None:
    """Back up the database (pg_dump) and the audit heads; never the keyring.

    Keep the backup away from the keyring: together they would keep a withdrawn person's data readable.
    The withdrawal ledger (beside the outside checkpoints) must outlive the backup: a restore needs it."""
    from agentbank.audit.trust import TrustedKeys
    from agentbank.db.connections import owner_database_url
    from agentbank.participants.backups import back_up

    settings = load_settings()
    manifest = back_up(settings, owner_database_url(settings), destination, TrustedKeys.of(settings))
    console.print(
        f"backed up to {destination}: the database ({manifest.files['database.dump'][:12]}…, PostgreSQL "
        f"{manifest.server_major}), the audit heads, and the withdrawal ledger's place ({manifest.ledger_entries} "
        "entries); no key"
    )


@cli.command("restore")
def restore_backup(
    source: Annotated[Path, typer.Argument(help="A directory `agentbank backup` wrote.")],
    yes: Annotated[bool, typer.Option("--yes", help="Replace the bank's database without asking.")] = False,
) -> None:
    """Replace the bank's database with a backup, then re-apply every withdrawal recorded since.

    Stop the API and the workers first: the database is replaced whole. The keyring in use now and the
    withdrawal ledger are needed; a ledger that does not check, or is older than the backup, is refused."""
    from agentbank.audit.trust import TrustedKeys
    from agentbank.db.connections import owner_database_url
    from agentbank.participants.restoring import restore
    from agentbank.runtime.bank import open_keyring
    from migrations.runner import SCHEMA

    settings = load_settings()
    if not yes and not typer.confirm(f"Replace the bank's database with the backup in {source}?"):
        raise typer.Exit(1)
    if settings.database_url is None:
        # A new data directory (the old one lost): the embedded server gets the application role first,
        # which the dump's grants name. What this migrates is then replaced.
        SCHEMA.migrate(settings)
    owner = owner_database_url(settings)
    keys = open_keyring(settings)
    done = restore(settings, owner, source, keys, TrustedKeys.of(settings), operator(), SCHEMA.upgrade)
    with open_bank(settings, models=False):  # chains the restore's audit events
        pass
    heads = "; the outside audit heads came back from the backup" if done.heads_restored else ""
    console.print(
        f"restored the backup of {done.manifest.created_at.isoformat(timespec='seconds')}: "
        f"{len(done.reapplied)} withdrawal(s) since it re-applied, {done.rekeyed} data key(s) taken from the "
        f"withdrawal ledger{heads}"
    )
