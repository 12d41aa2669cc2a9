"""The audit log: append-only, hash-chained events, the Merkle tree over them, signed checkpoints of its
head and witnesses' cosignatures of those."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Identity,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.db.base import Base


class AuditEvent(Base):
    """One access or decision. ``hash`` covers the previous event's hash and this event's content.

    Written in its action's transaction with no place in the chain yet; the sequencer (``audit``) gives
    it ``seq`` (the head's seq + 1, so the sequence has no gaps), ``prev_hash`` and ``hash`` once. The
    database enforces both halves (migration 0029): a row written with a place already is quarantined,
    and a place is given only at the head, linked to it.
    """

    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_participant", "participant_id", "id"),
        Index("ix_audit_events_unsequenced", "id", postgresql_where=text("seq IS NULL AND NOT quarantined")),
        Index("ix_audit_events_quarantined", "id", postgresql_where=text("quarantined")),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)  # the order of writing
    seq: Mapped[int | None] = mapped_column(BigInteger, unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    actor_kind: Mapped[str] = mapped_column(String(16))  # client | participant | operator | system
    actor_id: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(48))
    tier: Mapped[str] = mapped_column(String(16))  # open | restricted | participant | admin
    project_id: Mapped[uuid.UUID | None] = mapped_column()
    agent_id: Mapped[uuid.UUID | None] = mapped_column()
    participant_id: Mapped[uuid.UUID | None] = mapped_column()
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    prev_hash: Mapped[bytes | None] = mapped_column(LargeBinary)
    hash: Mapped[bytes | None] = mapped_column(LargeBinary)
    # Set by the database's triggers, whatever a writer but the owner sends: written claiming a place it was not given
    # (never chained); the database's own fingerprint of the content when it was placed; the Merkle leaf's
    # format (``agentbank.audit.entries``: 1 before migration 0029, 2 since).
    quarantined: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    placed_digest: Mapped[bytes | None] = mapped_column(LargeBinary)
    leaf_version: Mapped[int] = mapped_column(SmallInteger, server_default=text("2"))


class AuditCheckpoint(Base):
    """A signed statement of the log's head, published so truncation can be detected later."""

    __tablename__ = "audit_checkpoints"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    head_hash: Mapped[bytes] = mapped_column(LargeBinary)
    signed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    key_id: Mapped[str] = mapped_column(String(32))
    signature: Mapped[bytes] = mapped_column(LargeBinary)
    # The same head as a C2SP checkpoint (origin, tree size, Merkle root) with the bank's note signature;
    # null on checkpoints signed before the log had a tree.
    note: Mapped[str | None] = mapped_column(Text)


class AuditTreeNode(Base):
    """A perfect subtree of the audit log's Merkle tree: ``2**level`` leaves from ``index * 2**level``.

    Only subtrees of 256 leaves and up are kept (about one row per 128 events); smaller ones are hashed
    from the events when a proof needs them, so any proof reads O(log n) rows.
    """

    __tablename__ = "audit_tree_nodes"

    level: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    index: Mapped[int] = mapped_column("idx", BigInteger, primary_key=True)
    hash: Mapped[bytes] = mapped_column(LargeBinary)


class AuditCosignature(Base):
    """A witness's cosignature line over a signed tree head (c2sp.org/tlog-cosignature), as it answered."""

    __tablename__ = "audit_cosignatures"
    __table_args__ = (UniqueConstraint("checkpoint_id", "witness"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    # No foreign key: a checkpoint row may go (only with the owner's rights, as tampering) and its
    # cosignatures stay, as evidence of what the witness saw.
    checkpoint_id: Mapped[int] = mapped_column(Integer)
    witness: Mapped[str] = mapped_column(String(200))  # the witness's key name
    line: Mapped[str] = mapped_column(Text)  # "— name base64(key ID || time || signature)"
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
