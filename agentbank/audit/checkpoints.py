"""Signed checkpoints of the audit log's head, kept in the database and published outside it.

A checkpoint states "the log had ``seq`` events and its head hash was ``head_hash``", signed with the
bank's key, and the same head as a signed tree head: a C2SP checkpoint note (origin, ``seq`` as the
tree size, the Merkle root; ``agentbank.audit.tree``) that proofs are checked against and witnesses
cosign. Rows in the database alone prove little to someone who can rewrite the database, so each
checkpoint is also appended to a file meant for another volume or a witness, and served at
``GET /v1/audit/checkpoints`` for anyone to fetch and keep. Verification then checks the log against
those outside copies.

Workers sign automatically: once ``audit_checkpoint_events`` events are uncovered, or once the newest
checkpoint is ``audit_checkpoint_interval_s`` old and events came after it.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import notes, tree
from agentbank.audit.log import APPEND_LOCK, Actor, record, sequence
from agentbank.audit.signing_keys import AuditSigner
from agentbank.audit.tiers import Tier
from agentbank.core.settings import Settings
from agentbank.db import transaction
from agentbank.db.models import AuditCheckpoint, AuditEvent


def checkpoint_message(seq: int, head_hash: bytes, signed_at: datetime) -> bytes:
    """What a checkpoint signature covers (the key is named beside it by its fingerprint)."""
    return f"agentbank-audit-checkpoint\n{seq}\n{head_hash.hex()}\n{signed_at.astimezone(UTC).isoformat()}".encode()


@dataclass(frozen=True)
class SignedCheckpoint:
    """One checkpoint, wherever it was read from: a database row, the outside file, a witness's copy."""

    seq: int
    head_hash: bytes
    signed_at: datetime
    key_id: str
    signature: bytes
    # The same head as a C2SP checkpoint: the Merkle root at ``seq`` with the bank's note signature, and
    # witnesses' cosignatures where they were gathered. None on checkpoints signed before the tree.
    note: str | None = None

    @classmethod
    def of(cls, row: AuditCheckpoint, cosignatures: str = "") -> SignedCheckpoint:
        """The statement a stored row holds, with the cosignature lines given (witnesses' answers)."""
        note = row.note
        if note is not None and cosignatures:
            note = notes.Note.parse(note).with_signatures(cosignatures).render()
        return cls(row.seq, row.head_hash, row.signed_at, row.key_id, row.signature, note)

    def tree_head(self) -> notes.TreeHead | None:
        """The tree head its note states, or None (no note, or one that is not a checkpoint)."""
        if self.note is None:
            return None
        try:
            return notes.TreeHead.parse(notes.Note.parse(self.note).text)
        except notes.NoteError:
            return None

    def message(self) -> bytes:
        """The bytes its signature covers."""
        return checkpoint_message(self.seq, self.head_hash, self.signed_at)

    def to_json(self) -> dict[str, Any]:
        """The published form (hashes and signature in hex), as served and as kept in the file."""
        published = {
            "seq": self.seq, "head_hash": self.head_hash.hex(), "signed_at": self.signed_at.astimezone(UTC).isoformat(),
            "key_id": self.key_id, "signature": self.signature.hex(),
        }  # fmt: skip
        return published if self.note is None else {**published, "note": self.note}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SignedCheckpoint:
        """Read the published form back; raises ValueError (or KeyError, TypeError) if it is not one."""
        signed_at = datetime.fromisoformat(data["signed_at"])
        if signed_at.tzinfo is None:
            raise ValueError("signed_at has no time zone")
        note = data.get("note")
        return cls(
            int(data["seq"]), bytes.fromhex(data["head_hash"]), signed_at, str(data["key_id"]),
            bytes.fromhex(data["signature"]), None if note is None else str(note),
        )  # fmt: skip


class CheckpointFile:
    """An append-only file of checkpoints, one JSON object a line; nothing here ever rewrites a line."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def of(cls, settings: Settings) -> CheckpointFile:
        """The bank's own outside file (``AGENTBANK_AUDIT_CHECKPOINT_DIR``)."""
        return cls(settings.audit_checkpoint_path)

    def append(self, point: SignedCheckpoint) -> None:
        """Add one checkpoint durably (fsync) before returning."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = (json.dumps(point.to_json(), sort_keys=True) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # workers on one machine never interleave their lines
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self) -> tuple[list[SignedCheckpoint], list[str]]:
        """Every checkpoint in the file, and a problem for each line that is not one (none if absent)."""
        if not self.path.exists():
            return [], []
        return parse_checkpoints(self.path.read_text(encoding="utf-8"), str(self.path))


def parse_checkpoints(content: str, source: str) -> tuple[list[SignedCheckpoint], list[str]]:
    """Checkpoints from JSON lines (the file) or one JSON document (what ``GET /v1/audit/checkpoints`` serves)."""
    try:
        document = json.loads(content)
    except json.JSONDecodeError:
        document = None
    if isinstance(document, dict) and "checkpoints" in document:
        entries = list(enumerate(document["checkpoints"], 1))
    elif isinstance(document, list):
        entries = list(enumerate(document, 1))
    else:
        entries = []
        for number, line in enumerate(content.splitlines(), 1):
            if line.strip():
                try:
                    entries.append((number, json.loads(line)))
                except json.JSONDecodeError:
                    entries.append((number, None))
    points, problems = [], []
    for number, entry in entries:
        try:
            points.append(SignedCheckpoint.from_json(entry))
        except (ValueError, KeyError, TypeError):
            problems.append(f"{source}, entry {number}, is not a checkpoint")
    return points, problems


def sign_head(session: Session, signer: AuditSigner) -> AuditCheckpoint | None:
    """Chain what is waiting and sign the new head (None for an empty log), in the caller's transaction."""
    # The sequencers' lock: no other chains an event while the head is read and signed.
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": APPEND_LOCK})
    sequence(session)
    head = session.execute(
        select(AuditEvent.seq, AuditEvent.hash).where(AuditEvent.seq.is_not(None)).order_by(AuditEvent.seq.desc())
        .limit(1)
    ).first()  # fmt: skip
    if head is None or head.hash is None:
        return None
    tree.extend(session)  # a log chained before the tree existed gets its nodes here, once
    tree_head = notes.TreeHead(signer.origin, head.seq, tree.StoredTree(session).root(head.seq))
    signed_at = datetime.now(UTC)
    row = AuditCheckpoint(
        seq=head.seq, head_hash=head.hash, signed_at=signed_at, key_id=signer.key_id,
        signature=signer.sign(checkpoint_message(head.seq, head.hash, signed_at)),
        note=signer.sign_note(tree_head.text()).render(),
    )  # fmt: skip
    session.add(row)
    session.flush()
    return row


def latest_checkpoint(session: Session, valid: Callable[[SignedCheckpoint], bool]) -> AuditCheckpoint | None:
    """The newest stored checkpoint that is ``valid`` (signed by a trusted key). The application's role may
    add rows here (workers sign as it), so a row nobody trusted signed is passed over: a junk row with a
    high ``seq`` must neither stop the schedule nor be served as the head."""
    rows = session.scalars(
        select(AuditCheckpoint).order_by(AuditCheckpoint.seq.desc(), AuditCheckpoint.id.desc())
        .execution_options(yield_per=200)
    )  # fmt: skip
    return next((row for row in rows if valid(SignedCheckpoint.of(row))), None)


def signed_with(public_key: Ed25519PublicKey) -> Callable[[SignedCheckpoint], bool]:
    """Whether a checkpoint's signature is valid under ``public_key`` (the signer's own, for its schedule)."""

    def valid(point: SignedCheckpoint) -> bool:
        try:
            public_key.verify(point.signature, point.message())
        except InvalidSignature:
            return False
        return True

    return valid


@dataclass(frozen=True)
class Schedule:
    """When a worker signs on its own: after this many uncovered events, or when the newest checkpoint is this old."""

    events: int
    interval_s: float

    def due(self, head_seq: int, last: AuditCheckpoint | None, now: datetime) -> bool:
        """Whether the head at ``head_seq`` should be signed now, given the newest checkpoint."""
        uncovered = head_seq - (last.seq if last else 0)
        if uncovered <= 0:
            return False
        return last is None or uncovered >= self.events or (now - last.signed_at).total_seconds() >= self.interval_s


def publish_checkpoint(
    sessions: sessionmaker[Session], signer: AuditSigner, outside: CheckpointFile, schedule: Schedule | None = None
) -> SignedCheckpoint | None:
    """Sign the head in a transaction of its own, commit it, then append it to the outside file.

    With a ``schedule``, only when it is due. The row is committed first so that an outside
    checkpoint always has its row: one missing later was deleted, never lost to a failed commit.
    """
    with transaction(sessions) as session:
        if schedule is not None:
            session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": APPEND_LOCK})
            sequence(session)
            head_seq = session.scalar(select(func.max(AuditEvent.seq))) or 0
            last = latest_checkpoint(session, signed_with(signer.public_key))
            if not schedule.due(head_seq, last, datetime.now(UTC)):
                return None
        row = sign_head(session, signer)
        point = SignedCheckpoint.of(row) if row is not None else None
    if point is not None:
        outside.append(point)
    return point


def checkpoint_now(
    sessions: sessionmaker[Session], session: Session, signer: AuditSigner, outside: CheckpointFile, actor: Actor
) -> SignedCheckpoint | None:
    """An operator's checkpoint, now: signed, committed and published in a transaction of its own (so it
    covers only committed events, and is outside whatever becomes of the caller), then the operator's act
    audited in the caller's ``session``. None: the log is empty."""
    point = publish_checkpoint(sessions, signer, outside)
    if point is not None:
        record(session, actor, "audit.checkpoint", Tier.ADMIN, details={"seq": point.seq})
    return point
