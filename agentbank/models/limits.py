"""Limits every process of the bank shares: when each model endpoint may be called next."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, String
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.db.base import Base


class CallLimit(Base):
    """One limited quantity of one endpoint (its requests, or its tokens) and its theoretical arrival
    time: the moment up to which the allowance is already spent (the generic cell rate algorithm)."""

    __tablename__ = "call_limits"

    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    tat: Mapped[datetime] = mapped_column(DateTime(timezone=True))
