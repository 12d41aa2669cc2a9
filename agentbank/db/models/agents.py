"""Agents and their memory: transcript chunks and expert reflections with embeddings."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Index, Integer, LargeBinary, String, UniqueConstraint, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.core.statuses import AgentStatus, StatusColumn
from agentbank.db.base import Base


class Agent(Base):
    """An immutable build of a participant's agent: one transcript version, its reflections, its models."""

    __tablename__ = "agents"
    __table_args__ = (UniqueConstraint("participant_id", "version"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    participant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("participants.id"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    transcript_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("transcripts.id"))
    status: Mapped[AgentStatus] = mapped_column(StatusColumn(AgentStatus), default=AgentStatus.ACTIVE)
    # The models and prompt version the reflections were written with, and build parameters.
    build: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    persona_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary)
    # Names the participant mentioned, which individual answers must not repeat (sealed, JSON list).
    deny_list_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Memory(Base):
    """A chunk of the transcript (with the turns it spans) or one expert observation.

    Retrieval is always within one agent, whose few hundred memories are scanned exactly: the text and its
    embedding (float32, any dimension, so another embedder can be configured) are both sealed with the
    participant's key, since an embedding can be inverted into much of the text it came from.
    """

    __tablename__ = "memories"
    __table_args__ = (Index("ix_memories_agent_kind", "agent_id", "kind"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id"))
    kind: Mapped[str] = mapped_column(String(16))  # chunk | reflection
    expert: Mapped[str | None] = mapped_column(String(32))
    position: Mapped[int] = mapped_column(Integer)
    first_turn: Mapped[int | None] = mapped_column(Integer)
    last_turn: Mapped[int | None] = mapped_column(Integer)
    word_count: Mapped[int] = mapped_column(Integer, default=0)
    text_encrypted: Mapped[bytes] = mapped_column(LargeBinary)
    embedding_encrypted: Mapped[bytes] = mapped_column(LargeBinary)
