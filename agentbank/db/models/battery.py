"""The participant's own survey answers (the battery), in waves: sealed with their data key."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Integer, LargeBinary, String, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.core.statuses import BatteryWaveStatus, StatusColumn
from agentbank.db.base import Base


class BatteryWave(Base):
    """One wave of a participant's battery: wave 1 after the interview, wave 2 (the retest) once due."""

    __tablename__ = "battery_waves"

    participant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("participants.id"), primary_key=True)
    wave: Mapped[int] = mapped_column(Integer, primary_key=True)
    status: Mapped[BatteryWaveStatus] = mapped_column(StatusColumn(BatteryWaveStatus))
    # The retest may be taken from this moment on (wave 1: when it was opened).
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class BatteryAnswer(Base):
    """One answer of one wave, sealed: the code or value given, or that the person preferred not to say."""

    __tablename__ = "battery_answers"
    __table_args__ = (UniqueConstraint("participant_id", "wave", "item"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    participant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("participants.id"), index=True)
    wave: Mapped[int] = mapped_column(Integer)
    item: Mapped[str] = mapped_column(String(80))  # instrument:key, as the battery names it
    answer_encrypted: Mapped[bytes] = mapped_column(LargeBinary)
    answered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
