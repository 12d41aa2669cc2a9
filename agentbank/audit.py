"""The tamper-evident audit log.

Every access is recorded in the same transaction as the access itself. Each event's hash covers the
previous event's hash and the event's content, so editing, deleting or reordering events breaks the
chain; signed checkpoints of the head (Ed25519) make a truncated tail detectable too. Appends are
serialized by a transaction-scoped advisory lock, so the chain never forks.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from agentbank.models import AuditCheckpoint, AuditEvent

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


class AuditSigner:
    """Signs checkpoints of the log's head with an Ed25519 key derived from the bank's secret."""

    def __init__(self, secret: str) -> None:
        seed = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"agentbank/audit/v1", info=b"checkpoints").derive(
            secret.encode()
        )
        self._key = Ed25519PrivateKey.from_private_bytes(seed)
        self.public_key = self._key.public_key()
        self.key_id = key_id(self.public_key)

    def sign(self, seq: int, head_hash: bytes, signed_at: datetime) -> bytes:
        """The signature of a checkpoint statement."""
        return self._key.sign(checkpoint_message(seq, head_hash, signed_at))

    def public_pem(self) -> str:
        """The public key, for anyone who wants to check a checkpoint."""
        return self.public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode()


def key_id(public_key: Ed25519PublicKey) -> str:
    """A short fingerprint of a public key."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def checkpoint_message(seq: int, head_hash: bytes, signed_at: datetime) -> bytes:
    """What a checkpoint signature covers."""
    return f"agentbank-audit-checkpoint\n{seq}\n{head_hash.hex()}\n{signed_at.astimezone(UTC).isoformat()}".encode()


def checkpoint(session: Session, signer: AuditSigner) -> AuditCheckpoint | None:
    """Sign and store the current head (None for an empty log); the caller commits."""
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": APPEND_LOCK})
    head = session.execute(select(AuditEvent.seq, AuditEvent.hash).order_by(AuditEvent.seq.desc()).limit(1)).first()
    if head is None:
        return None
    signed_at = datetime.now(UTC)
    point = AuditCheckpoint(
        seq=head.seq,
        head_hash=head.hash,
        signed_at=signed_at,
        key_id=signer.key_id,
        signature=signer.sign(head.seq, head.hash, signed_at),
    )
    session.add(point)
    session.flush()
    return point


def latest_checkpoint(session: Session) -> AuditCheckpoint | None:
    """The newest published checkpoint."""
    return session.scalars(
        select(AuditCheckpoint).order_by(AuditCheckpoint.seq.desc(), AuditCheckpoint.id.desc())
    ).first()


@dataclass
class Finding:
    """One way the log differs from what was written."""

    kind: str  # edited | deleted | reordered | truncated | bad_signature
    seq: int | None
    message: str


@dataclass
class Verification:
    """The outcome of checking the whole log."""

    events: int = 0
    head_seq: int = 0
    checkpoint_seq: int | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether no tampering was found."""
        return not self.findings


def verify(
    events: Iterable[AuditEvent], checkpoints: Iterable[AuditCheckpoint], public_key: Ed25519PublicKey
) -> Verification:
    """Walk the log in sequence order and name every edit, deletion, reordering and truncation."""
    result = Verification()
    hashes_at: dict[int, bytes] = {}
    rows = list(events)
    all_hashes = {row.hash for row in rows}
    prev, expected = GENESIS, 1
    for row in rows:
        result.events += 1
        if event_hash(row.prev_hash, row) != row.hash:
            result.findings.append(Finding("edited", row.seq, f"event {row.seq} was edited after it was written"))
        if row.seq > expected:
            missing = f"{expected}" if row.seq == expected + 1 else f"{expected}–{row.seq - 1}"
            result.findings.append(Finding("deleted", expected, f"event(s) {missing} were deleted"))
        elif row.prev_hash != prev:
            if row.prev_hash in all_hashes:
                message = f"event {row.seq} was moved: it was written after another event"
                result.findings.append(Finding("reordered", row.seq, message))
            else:
                message = f"the event before {row.seq} was deleted or rewritten"
                result.findings.append(Finding("deleted", row.seq, message))
        prev, expected = row.hash, row.seq + 1
        hashes_at[row.seq] = row.hash
    result.head_seq = expected - 1
    for point in checkpoints:
        signed = checkpoint_message(point.seq, point.head_hash, point.signed_at)
        try:
            if point.key_id != key_id(public_key):
                raise InvalidSignature
            public_key.verify(point.signature, signed)
        except InvalidSignature:
            result.findings.append(
                Finding("bad_signature", point.seq, f"checkpoint at {point.seq} is not validly signed")
            )
            continue
        result.checkpoint_seq = max(result.checkpoint_seq or 0, point.seq)
        if point.seq > result.head_seq:
            text_ = f"the log ends at event {result.head_seq}, but event {point.seq} was published in a checkpoint"
            result.findings.append(Finding("truncated", result.head_seq + 1, text_))
        elif hashes_at.get(point.seq) != point.head_hash:
            result.findings.append(
                Finding("edited", point.seq, f"the log up to event {point.seq} differs from its signed checkpoint")
            )
    return result


def verify_log(session: Session, public_key: Ed25519PublicKey) -> Verification:
    """Verify the log stored in the database."""
    events = session.scalars(select(AuditEvent).order_by(AuditEvent.seq).execution_options(yield_per=2000))
    checkpoints = session.scalars(select(AuditCheckpoint).order_by(AuditCheckpoint.id))
    return verify(events, list(checkpoints), public_key)
