"""The tamper-evident audit log.

Every access is recorded in the same transaction as the access itself. Each event's hash covers the
previous event's hash and the event's content, so editing, deleting or reordering events breaks the
chain; signed checkpoints of the head (``agentbank.audit.checkpoints``), kept outside the database too, make a
rewritten or truncated log detectable (``agentbank.audit.verification``).

Appending takes no lock, so unrelated requests never wait for each other: an event is written with no
place in the chain, and a sequencer (``sequence``, run by every API and worker process every
``AGENTBANK_AUDIT_SEQUENCE_INTERVAL_S``) gives the committed ones their places, in order, shortly after,
as transparency logs do. Sequencers serialize among themselves on an advisory lock, so the chain never
forks; an event whose transaction committed just before a crash is sequenced by the next one. The
same sequencer grows the Merkle tree over the chain (``agentbank.audit.tree``), from which a
participant's use is proven against a signed tree head.

The sequencer runs as the application's role, so that role could also write a place itself. The
database refuses what would break the log (migration 0029): an event inserted claiming a place is
quarantined, never chained, and a place is given only at the head, linked to it. A hash it cannot check
(a waiting event placed with a hash that is not its content's) is quarantined by verification
(``agentbank.audit.chain``): the chain goes on from it, so nothing stops.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select, text
from sqlalchemy.orm import Session

from agentbank.audit import tree
from agentbank.audit.tiers import Tier
from agentbank.core.errors import ConflictError
from agentbank.db.models import AuditEvent

log = logging.getLogger(__name__)

GENESIS = bytes(32)
# Any constant works; it only has to be the same for every writer of the log.
APPEND_LOCK = 0x61756469  # "audi"
SEQUENCE_BATCH = 5000  # events chained in one transaction


@dataclass(frozen=True)
class Actor:
    """Who acted: a client (researcher or team), a participant, an operator, or the system."""

    kind: str
    id: str


SYSTEM = Actor("system", "agentbank")


def canonical(event: AuditEvent) -> bytes:
    """The hashed content of an event. The sequence number is not in it: order lives in the chain."""
    content = {
        "created_at": event.created_at.astimezone(UTC).isoformat(),
        "actor": [event.actor_kind, event.actor_id],
        "action": event.action,
        "tier": event.tier,
        "project_id": str(event.project_id) if event.project_id else None,
        "agent_id": str(event.agent_id) if event.agent_id else None,
        "participant_id": str(event.participant_id) if event.participant_id else None,
        "details": event.details,
    }
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def event_hash(prev_hash: bytes, event: AuditEvent) -> bytes:
    """sha256 over the previous hash and the event's canonical content."""
    return hashlib.sha256(prev_hash + canonical(event)).digest()


_INSERT = insert(AuditEvent).returning(AuditEvent.id)  # built once: every audited request runs it


def record(
    session: Session,
    actor: Actor,
    action: str,
    tier: Tier,
    *,
    project_id: uuid.UUID | None = None,
    agent_id: uuid.UUID | None = None,
    participant_id: uuid.UUID | None = None,
    details: dict[str, Any] | None = None,
) -> int:
    """Append an event in the caller's transaction (so it commits, or not, with the access); its id. The
    sequencer chains it after the commit.

    One INSERT on the session's connection, not an object added and flushed nor an ORM statement: the unit of
    work, then the ORM's bulk-insert path, were about an eighth of an open-tier read's busy time. What the
    session holds is flushed first, so the event follows what the caller changed (and may name it)."""
    session.flush()
    values = {
        "created_at": datetime.now(UTC),
        "actor_kind": actor.kind,
        "actor_id": actor.id,
        "action": action,
        "tier": tier,
        "project_id": project_id,
        "agent_id": agent_id,
        "participant_id": participant_id,
        # JSONB normalizes what it stores; keep the stored form so the hash covers the same bytes.
        "details": json.loads(json.dumps(details or {}, sort_keys=True)),
    }
    return session.connection().execute(_INSERT, values).scalar_one()


def record_many(session: Session, actor: Actor, action: str, tier: Tier, events: list[dict[str, Any]]) -> int:
    """Append one event per entry of ``events`` (each with its ``agent_id``, ``participant_id`` and ``details``)
    in the caller's transaction, in batches: a release tells each of its members at once. How many."""
    session.flush()
    now = datetime.now(UTC)
    rows = [{"created_at": now, "actor_kind": actor.kind, "actor_id": actor.id, "action": action, "tier": tier,
             "project_id": None, "agent_id": e.get("agent_id"), "participant_id": e.get("participant_id"),
             "details": json.loads(json.dumps(e.get("details") or {}, sort_keys=True))} for e in events]  # fmt: skip
    for start in range(0, len(rows), SEQUENCE_BATCH):
        session.connection().execute(insert(AuditEvent), rows[start : start + SEQUENCE_BATCH])
    return len(rows)


def sequence(session: Session, limit: int = SEQUENCE_BATCH) -> int:
    """Give committed events that have no place in the chain yet the next places, oldest written first;
    returns how many. Another sequencer at work makes this one return 0 at once. Quarantined rows (written
    claiming a place) wait for none."""
    if not session.scalar(text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": APPEND_LOCK}):
        return 0
    head = session.scalars(
        select(AuditEvent).where(AuditEvent.seq.is_not(None)).order_by(AuditEvent.seq.desc()).limit(1)
    ).first()  # fmt: skip
    seq, prev = (head.seq or 0, head.hash or b"") if head is not None else (0, GENESIS)
    waiting = session.scalars(
        select(AuditEvent).where(AuditEvent.seq.is_(None), ~AuditEvent.quarantined).order_by(AuditEvent.id).limit(limit)
    ).all()  # in id order, which is also the order of the UPDATEs: the database places each at the head only
    if waiting and head is not None and _placed_by_another(head):
        # Someone with the application's rights placed it with another hash. The database links what follows
        # to it all the same (no gap, no fork), so the chain goes on; verification counts it as quarantined.
        log.warning("the newest chained audit event carries a hash the sequencer did not compute: quarantined")
    placed = 0
    for event in waiting:
        seq += 1
        event.seq, event.prev_hash = seq, prev
        event.hash = prev = event_hash(prev, event)
        placed += 1
    session.flush()
    if placed:  # the Merkle tree's stored nodes grow with the chain, in the same transaction
        try:
            with session.begin_nested():
                tree.extend(session)
        except ConflictError as exc:
            # Events missing under the tree (deleted by someone with the owner's rights) must not stop the
            # chain: new events are still chained, checkpoints refuse to sign, and `audit verify` names it.
            log.warning("the audit tree cannot grow: %s", exc.message)
    return placed


def _placed_by_another(event: AuditEvent) -> bool:
    """Whether a placed event's hash is not the one the sequencer computes (placed since migration 0029)."""
    return event.placed_digest is not None and event_hash(event.prev_hash or b"", event) != event.hash
