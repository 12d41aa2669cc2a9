"""Report cards: how well each agent predicted its own participant, from evaluation runs."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, LargeBinary, String, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.db.base import Base


class ReportCard(Base):
    """One agent's accuracy on one instrument in one evaluation run, normalized by the person's retest.

    The scores are about one person (and, item by item, whether their agent matched their own answer and
    whether they repeated it): a JSON object sealed with the participant's data key. What is in the clear
    says only which run wrote the card, for which agent and condition.
    """

    __tablename__ = "report_cards"
    __table_args__ = (UniqueConstraint("agent_id", "instrument", "run_id", "condition"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id"), index=True)
    instrument: Mapped[str] = mapped_column(String(64))
    run_id: Mapped[str] = mapped_column(String(120))
    condition: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    prompt_version: Mapped[str] = mapped_column(String(64))
    scores_encrypted: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
