"""The audit log: append-only, hash-chained events and signed checkpoints of its head."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, Identity, Index, LargeBinary, String, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.db.base import Base


class AuditEvent(Base):
    """One access or decision. ``hash`` covers the previous event's hash and this event's content.

    Written in its action's transaction with no place in the chain yet; the sequencer (``audit``) gives
    it ``seq`` (the head's seq + 1, so the sequence has no gaps), ``prev_hash`` and ``hash`` once.
    """

    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_participant", "participant_id", "id"),
        Index("ix_audit_events_unsequenced", "id", postgresql_where=text("seq IS NULL")),
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


class AuditCheckpoint(Base):
    """A signed statement of the log's head, published so truncation can be detected later."""

    __tablename__ = "audit_checkpoints"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    head_hash: Mapped[bytes] = mapped_column(LargeBinary)
    signed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    key_id: Mapped[str] = mapped_column(String(32))
    signature: Mapped[bytes] = mapped_column(LargeBinary)
