"""Studies: a cohort of invitations under one name, script, target size, expiry and recruitment panel."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Index, Integer, String, func
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.db.base import Base


class Study(Base):
    """A study a coordinator runs: who it invites is kept on its invitations, never here.

    ``panel_param`` is the query parameter the panel appends to the link with its own participant id
    (Prolific's ``PROLIFIC_PID``); ``completion_url`` and ``retest_completion_url`` are where the interview's
    end and the retest's end send the participant back, with the panel's completion code in them.
    ``open_code_hash`` is the hash of the study's one open link, which issues a code per visit (None: none).
    ``completion_codes`` is ``panel`` (those URLs carry the panel's one code) or ``per_participant`` (each
    participant's own code, derived when they reach an end, takes the ``{code}`` in them; none is stored).
    """

    __tablename__ = "studies"
    # Names are unique per owner (the operator's among themselves too): nobody learns of another's study.
    __table_args__ = (
        Index("uq_studies_owner_name", "owner_pk", "name", unique=True, postgresql_nulls_not_distinct=True),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    name: Mapped[str] = mapped_column(String(200))
    script_key: Mapped[str] = mapped_column(String(64))
    script_version: Mapped[int] = mapped_column(Integer)
    target_size: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    panel: Mapped[str] = mapped_column(String(32), default="none")
    panel_param: Mapped[str | None] = mapped_column(String(64))
    completion_url: Mapped[str | None] = mapped_column(String(500))
    retest_completion_url: Mapped[str | None] = mapped_column(String(500))
    open_code_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    completion_codes: Mapped[str] = mapped_column(String(16), default="panel", server_default="panel")
    # The client that owns the study (its creator, or whom the operator transferred it to); None: the operator's.
    owner_pk: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("clients.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
