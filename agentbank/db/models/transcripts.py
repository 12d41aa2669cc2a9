"""Interview transcripts: ordered turns, encrypted, immutable once final (enforced by the database)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Integer, LargeBinary, String, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column, relationship

from agentbank.core.statuses import StatusColumn, TranscriptStatus
from agentbank.db.base import Base


class Transcript(Base):
    """One version of a participant's interview."""

    __tablename__ = "transcripts"
    __table_args__ = (UniqueConstraint("participant_id", "version"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    participant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("participants.id"), index=True)
    version: Mapped[int] = mapped_column(Integer, default=1)
    status: Mapped[TranscriptStatus] = mapped_column(StatusColumn(TranscriptStatus), default=TranscriptStatus.DRAFT)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finalized_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    turns: Mapped[list[Turn]] = relationship(order_by="Turn.position", lazy="raise")


class Turn(Base):
    """One turn of a transcript; the text is sealed with the participant's data key."""

    __tablename__ = "transcript_turns"
    __table_args__ = (UniqueConstraint("transcript_id", "position"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    transcript_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("transcripts.id"))
    position: Mapped[int] = mapped_column(Integer)
    speaker: Mapped[str] = mapped_column(String(16))  # interviewer | participant
    text_encrypted: Mapped[bytes] = mapped_column(LargeBinary)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
