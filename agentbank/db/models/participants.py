"""Participants: the people behind agents, pseudonymous, each with their own data key."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import DateTime, LargeBinary, String, func
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.core.statuses import ConsentStatus, StatusColumn
from agentbank.db.base import Base


class Participant(Base):
    """A person who gave an interview. ``wrapped_key`` is their data key, wrapped; None once destroyed."""

    __tablename__ = "participants"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    pseudonym: Mapped[str] = mapped_column(String(64), unique=True)
    # Where the interview came from (a file and record, or an interview session); ingest is idempotent on it.
    source_ref: Mapped[str] = mapped_column(String(300), unique=True)
    # Coded as in the GSS (sex, race, region, degree, ...), for breakdowns and demographic agents: a JSON
    # object sealed with the participant's data key (None: none known), read in memory where needed.
    demographics_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary)
    consent: Mapped[ConsentStatus] = mapped_column(StatusColumn(ConsentStatus), default=ConsentStatus.CONSENTED)
    wrapped_key: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
