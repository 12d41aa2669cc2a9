"""Restoring a backup without bringing anyone back who withdrew after it was taken.

The dump is restored into a new database beside the bank's (``dumps.stage``), brought to the current
schema, and finished there in one transaction before it takes the bank's place:

1. every participant restored with a data key gets one the keyring can still open: a withdrawal after
   the backup destroyed the key-encryption key the backup's wrapped keys need, and re-wrapped everyone
   else's keys under a new one, which the withdrawal ledger keeps (``ledger``);
2. every withdrawal in the ledger is re-applied (``withdrawal.reapply``): the person's agents are
   withdrawn, their rows removed, their key and demographics gone, their tasks cancelled;
3. the audit events chained since the backup are put back from the tiles kept outside the database
   (``audit.outside``), their hashes only, so the restored log extends the one the witnesses cosigned, and
   the restore's own event follows them. The database being replaced publishes to the tiles first.

The ledger must check (signatures, chain) and must reach at least as far as it did when the backup was
taken, with the same entries: a ledger cut or rewritten since could hide a withdrawal, so the restore
refuses it. Nothing else may use the database meanwhile (a withdrawal during the restore would be in
neither the backup nor the ledger as read): the restore refuses to start while other sessions are
connected, and to finish if the ledger grew. Until the last step the bank's database is untouched; a
failure leaves it as it was.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit import outside
from agentbank.audit.checkpoints import CheckpointFile
from agentbank.audit.tiers import Tier
from agentbank.audit.tiles import TileLog, outside_tiles
from agentbank.audit.trust import TrustedKeys, retired_keys_path
from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings
from agentbank.db import make_sessionmaker, transaction
from agentbank.db.dumps import sessions_on, stage
from agentbank.db.models import Participant
from agentbank.keys.crypto import DataKeyDestroyedError, DecryptionError, KeyRing, wrapped_version
from agentbank.participants.backups import DUMP, HEADS, Manifest, read_backup
from agentbank.participants.ledger import LedgerEntry, checked, read_ledger
from agentbank.participants.withdrawal import reapply


@dataclass(frozen=True)
class Restored:
    """What a restore did."""

    manifest: Manifest
    rekeyed: int  # participants whose data key came from the ledger
    reapplied: list[uuid.UUID]  # withdrawals the backup did not have yet
    heads_restored: bool  # the outside audit heads were missing and came from the backup


def restore(
    settings: Settings, owner_url: str, source: Path, keys: KeyRing, trusted: TrustedKeys, actor: audit.Actor,
    migrate: Callable[[str], None],
) -> Restored:  # fmt: skip
    """Replace the bank's database (at ``owner_url``, reached as its owner) with the backup at ``source``
    and re-apply every withdrawal since; ``migrate`` brings a database at a URL to the current schema.
    Nothing may use the database meanwhile: stop the API and the workers first."""
    manifest = read_backup(source)
    ledger = settings.withdrawal_ledger_path
    read = read_ledger(ledger, trusted)
    entries = checked(read, ledger)
    _same_history(entries, manifest, ledger)
    # A withdrawal committed while the restore runs would be in neither the backup nor the entries read.
    others = sessions_on(owner_url)
    if others:
        raise ConfigurationError(
            f"{others} session(s) are connected to the bank's database",
            hint="stop the API and the workers (and any other client of the database) before restoring",
        )
    tiles = outside_tiles(settings)
    _publish_current(owner_url, tiles)
    staged = stage(owner_url, source / DUMP)
    try:
        migrate(staged.url)
        engine = create_engine(staged.url, hide_parameters=True)
        try:
            with transaction(make_sessionmaker(engine)) as session:
                rekeyed = rekey(session, keys, entries)
                reapplied = [e.participant_id for e in entries if reapply(session, e.participant_id, actor)]
                # The events signed since the backup, from the tiles: the restore's event follows them.
                kept = outside.rebuild(session, tiles)
                if kept is not None:
                    heads, _ = CheckpointFile.of(settings).read()
                    outside.put_back_checkpoints(session, heads, kept[1])
                audit.record(session, actor, "bank.restore", Tier.ADMIN, details={
                    "backup_created_at": manifest.created_at.isoformat(), "rekeyed": rekeyed,
                    "reapplied": len(reapplied), "kept_outside": list(kept) if kept else None})  # fmt: skip
        finally:
            engine.dispose()
        if read_ledger(ledger, trusted).head != read.head:
            raise ConfigurationError(
                "a withdrawal was recorded while the backup was being restored; nothing was replaced",
                hint="stop every process of the bank, then restore again",
            )
    except BaseException:
        staged.discard()
        raise
    staged.replace()
    return Restored(manifest, rekeyed, reapplied, _restore_heads(settings, source))


def _publish_current(owner_url: str, tiles: TileLog) -> None:
    """Bring the tiles up to the database being replaced, where it is still there: every event it chained
    is then kept through the restore, even those no process had published yet."""
    engine = create_engine(owner_url, hide_parameters=True)
    try:
        with make_sessionmaker(engine)() as session:
            outside.publish(session, tiles)
    except SQLAlchemyError:  # no database to read (a new data directory): the tiles hold what they hold
        pass
    finally:
        engine.dispose()


def _same_history(entries: list[LedgerEntry], manifest: Manifest, path: Path) -> None:
    if len(entries) < manifest.ledger_entries or (
        manifest.ledger_entries and entries[manifest.ledger_entries - 1].hash != manifest.ledger_head
    ):
        raise ConfigurationError(
            f"the withdrawal ledger {path} is not the one this backup was taken beside: it holds {len(entries)} "
            f"entries, the backup saw {manifest.ledger_entries}",
            hint="restore the ledger from a copy kept elsewhere; a ledger cut or replaced could bring a withdrawn "
            "person back",
        )


def rekey(session: Session, keys: KeyRing, entries: list[LedgerEntry]) -> int:
    """Give every restored participant who still has a data key a wrapping the keyring can open: theirs if
    its key-encryption key still exists, else the newest the ledger holds. Those the ledger withdraws are
    left to ``reapply``. Raises ConfigurationError, changing nothing, if someone else's key is lost."""
    alive = set(keys.store.versions()) | {0}  # 0: the legacy key derived from the secret
    leaving = {e.participant_id for e in entries}
    newest: dict[uuid.UUID, bytes] = {}
    for entry in entries:  # in the order written: a later rotation's wrapping wins
        if entry.keyring_version in alive:
            newest.update(entry.wrapped)
    rekeyed, lost = 0, 0
    participants = session.scalars(select(Participant).where(Participant.wrapped_key.is_not(None)).with_for_update())
    changes: list[tuple[Participant, bytes]] = []
    for participant in participants:
        assert participant.wrapped_key is not None
        if participant.id in leaving or wrapped_version(participant.wrapped_key) in alive:
            continue
        candidate = newest.get(participant.id)
        try:
            if candidate is None:
                raise DecryptionError("no wrapping")
            keys.data_key(participant.id, candidate)
        except (DecryptionError, DataKeyDestroyedError):
            lost += 1
            continue
        changes.append((participant, candidate))
    if lost:
        raise ConfigurationError(
            f"{lost} restored participant(s) have a data key no key-encryption key of the keyring opens",
            hint="restore with the keyring the bank uses now (AGENTBANK_KEYRING_DIR or its key store), and the "
            "withdrawal ledger beside the outside checkpoints",
        )
    for participant, wrapped in changes:
        participant.wrapped_key = wrapped
        rekeyed += 1
    session.flush()
    return rekeyed


def _restore_heads(settings: Settings, source: Path) -> bool:
    """Put the backup's audit heads back where the outside file is missing; an existing one is never touched."""
    restored = False
    for target in (settings.audit_checkpoint_path, retired_keys_path(settings)):
        kept = source / HEADS / target.name
        if kept.exists() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(kept, target)
            restored = True
    return restored
