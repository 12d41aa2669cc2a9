"""The tamper-evident audit log.

Every access is recorded in the same transaction as the access itself. Each event's hash covers the
previous event's hash and the event's content, so editing, deleting or reordering events breaks the
chain; signed checkpoints of the head (``agentbank.checkpoints``), kept outside the database too, make a
rewritten or truncated log detectable (``agentbank.audit_verification``). Appends are serialized by a
transaction-scoped advisory lock, so the chain never forks.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from agentbank.models import AuditEvent

GENESIS = bytes(32)
# Any constant works; it only has to be the same for every writer of the log.
APPEND_LOCK = 0x61756469  # "audi"


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


def record(
    session: Session,
    actor: Actor,
    action: str,
    tier: str,
    *,
    project_id: uuid.UUID | None = None,
    agent_id: uuid.UUID | None = None,
    participant_id: uuid.UUID | None = None,
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append an event in the caller's transaction (so it commits, or not, with the access)."""
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": APPEND_LOCK})
    head = session.execute(select(AuditEvent.seq, AuditEvent.hash).order_by(AuditEvent.seq.desc()).limit(1)).first()
    event = AuditEvent(
        seq=head.seq + 1 if head else 1,
        created_at=datetime.now(UTC),
        actor_kind=actor.kind,
        actor_id=actor.id,
        action=action,
        tier=tier,
        project_id=project_id,
        agent_id=agent_id,
        participant_id=participant_id,
        details=details or {},
        prev_hash=head.hash if head else GENESIS,
    )
    # JSONB normalizes what it stores; hash the stored form so verification sees the same bytes.
    event.details = json.loads(json.dumps(event.details, sort_keys=True))
    event.hash = event_hash(event.prev_hash, event)
    session.add(event)
    session.flush()
    return event
