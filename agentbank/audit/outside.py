"""The audit log kept outside the database: published to the tiles as it is chained, compared with them,
and rebuilt from them after a restore.

A restore brings back the database as it was when the backup was taken; the events since, which the bank
signed and the witnesses cosigned, are gone from it. The tiles (``tiles``) still hold their entries and
chain hashes, so the restore puts them back as *kept outside* events (leaf version 0: the entry and chain
hash alone, their content lost with the database), then its own event follows them. The tree is again the
one the witnesses hold, and grows from it: they go on cosigning, and ``audit verify`` finds no rewrite.

Every process that chains events publishes what it chained (``publish``, after the commit: a crash in
between leaves the tiles behind the database, which the next round catches up; never ahead of it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from agentbank.audit import entries
from agentbank.audit.checkpoints import SignedCheckpoint
from agentbank.audit.log import GENESIS, SYSTEM
from agentbank.audit.tiers import Tier
from agentbank.audit.tiles import WIDTH, TileLog, TileLogError
from agentbank.core.errors import ConfigurationError
from agentbank.db.models import AuditCheckpoint, AuditEvent

log = logging.getLogger(__name__)
BATCH = 4 * WIDTH  # events read and written per round of publishing
KEPT_OUTSIDE_ACTION = "audit.kept_outside"


def _head(session: Session) -> tuple[int, bytes]:
    row = session.execute(
        select(AuditEvent.seq, AuditEvent.hash).where(AuditEvent.seq.is_not(None)).order_by(AuditEvent.seq.desc())
        .limit(1)
    ).first()  # fmt: skip
    return (row.seq, row.hash) if row is not None else (0, GENESIS)


def _placed(session: Session, start: int, end: int) -> list[AuditEvent]:
    """The placed events at leaves [start, end), in order."""
    query = select(AuditEvent).where(AuditEvent.seq > start, AuditEvent.seq <= end).order_by(AuditEvent.seq)
    return list(session.scalars(query))


def publish(session: Session, tiles: TileLog) -> int:
    """Append to the tiles every placed event they lack; how many. Tiles ahead of the database (a backup
    restored other than by ``agentbank restore``) or differing from it are logged, never overwritten."""
    size, (head, _) = tiles.size(), _head(session)
    published = 0
    try:
        while size < head:
            rows = _placed(session, size, min(head, size + BATCH))
            size = tiles.append(size, [entries.entry(r) for r in rows], [r.hash or b"" for r in rows])
            published += len(rows)
    except TileLogError as exc:
        log.error("the audit log cannot be kept outside the database: %s", exc.message)
    except OSError as exc:  # a full or read-only disk: the next round tries again
        log.error("the audit log cannot be written outside the database (%s); trying again", type(exc).__name__)
    if size > head:
        log.error("the audit tiles hold %d events, the database %d: restore backups with `agentbank restore`",
                  size, head)  # fmt: skip
    return published


@dataclass(frozen=True)
class Comparison:
    """The database's log beside the tiles: how far both go, and the first event where they differ."""

    database: int
    tiles: int
    first_difference: int | None  # a seq


def compare(session: Session, tiles: TileLog) -> Comparison:
    """Compare every event both hold (the tiles' entries commit to what each event says)."""
    size, (head, _) = tiles.size(), _head(session)
    for start in range(0, min(size, head), BATCH):
        end = min(size, head, start + BATCH)
        ours = [entries.entry(r) for r in _placed(session, start, end)]
        for offset, (mine, kept) in enumerate(zip(ours, tiles.entries(start, end), strict=True)):
            if mine != kept:
                return Comparison(head, size, start + offset + 1)
    return Comparison(head, size, None)


def rebuild(session: Session, tiles: TileLog) -> tuple[int, int] | None:
    """Put back, as kept-outside events, those the tiles hold beyond the database's head (after a restore);
    the seqs put back, or None. Refused when the database's log is not a prefix of the tiles'."""
    size, (head, prev) = tiles.size(), _head(session)
    if size <= head:
        return None
    found = compare(session, tiles)
    if found.first_difference is not None:
        raise ConfigurationError(
            f"the restored audit log differs from the one kept outside it from event {found.first_difference}",
            hint="the backup is not of this bank, or its log was edited: restore another backup",
        )
    now = datetime.now(UTC)
    for start in range(head, size, BATCH):
        end = min(size, start + BATCH)
        for offset, (entry, chained) in enumerate(zip(tiles.entries(start, end), tiles.chain(start, end),
                                                      strict=True)):  # fmt: skip
            session.add(AuditEvent(
                created_at=now, actor_kind=SYSTEM.kind, actor_id=SYSTEM.id, action=KEPT_OUTSIDE_ACTION, tier=Tier.ADMIN,
                details={"entry": entry.hex()}, seq=start + offset + 1, prev_hash=prev, hash=chained,
                leaf_version=entries.KEPT_OUTSIDE,
            ))  # fmt: skip
            prev = chained
        session.flush()
    return head + 1, size


def put_back_checkpoints(session: Session, outside: list[SignedCheckpoint], head: int) -> int:
    """Store again the checkpoints kept outside that the restored database lacks (signed after the backup,
    over events now put back): the bank's newest head is again the one the witnesses saw. How many."""
    newest = session.scalar(select(func.max(AuditCheckpoint.seq))) or 0
    added = 0
    for point in outside:
        if newest < point.seq <= head:
            session.add(AuditCheckpoint(seq=point.seq, head_hash=point.head_hash, signed_at=point.signed_at,
                                        key_id=point.key_id, signature=point.signature, note=point.note))  # fmt: skip
            newest, added = point.seq, added + 1
    session.flush()
    return added


__all__ = ["KEPT_OUTSIDE_ACTION", "Comparison", "compare", "publish", "put_back_checkpoints", "rebuild"]
