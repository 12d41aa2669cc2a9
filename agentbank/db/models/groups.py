"""Focus groups of a project's agents: the group as the team asked it, its seats, and every utterance as made.

An agent's words are never in these tables: an utterance names the answers the door stored (sealed with
the speaking agent's participant key, destroyed on withdrawal), as a job's result does. The moderator's
turns hold only the team's guide (a question or probe chosen from it) and seat labels, so they are
operational by construction (``restricted.groups.moderator``).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer, String, Text, UniqueConstraint, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.core.statuses import GroupStatus, SeatStatus, StatusColumn
from agentbank.db.base import Base


class FocusGroup(Base):
    """A moderated focus group a team asked for, submitted once per idempotency key, run by one worker task."""

    __tablename__ = "focus_groups"
    __table_args__ = (UniqueConstraint("client_pk", "idempotency_key"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id"), index=True)
    client_pk: Mapped[uuid.UUID] = mapped_column(ForeignKey("clients.id"))
    idempotency_key: Mapped[str] = mapped_column(String(200))
    request_hash: Mapped[str] = mapped_column(String(64))
    request: Mapped[dict[str, Any]] = mapped_column(JSONB)  # the guide and stimulus: the team's own text
    status: Mapped[GroupStatus] = mapped_column(StatusColumn(GroupStatus), default=GroupStatus.QUEUED)
    model: Mapped[str | None] = mapped_column(String(200))  # the chat model that ran it
    reason: Mapped[str | None] = mapped_column(String(200))  # why it stopped early (the bank's own words)
    estimate: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class FocusGroupSeat(Base):
    """A seat of a group and the agent in it; a seat whose participant withdrew is removed at once."""

    __tablename__ = "focus_group_seats"

    group_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("focus_groups.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)  # 1..12, shown as "Seat n"
    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id"), index=True)
    status: Mapped[SeatStatus] = mapped_column(StatusColumn(SeatStatus), default=SeatStatus.ACTIVE)
    removed_at: Mapped[int | None] = mapped_column(Integer)  # the utterance number it was removed at


class FocusGroupUtterance(Base):
    """One turn of a group, written as it is made: a moderator's turn, an agent's utterance (its answers'
    ids), a silence (withheld by the output check), or a seat leaving."""

    __tablename__ = "focus_group_utterances"
    __table_args__ = (UniqueConstraint("group_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    group_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("focus_groups.id"))
    number: Mapped[int] = mapped_column(Integer)  # its place in the transcript, 0, 1, ...
    round: Mapped[int] = mapped_column(Integer)  # the guide question it belongs to, 1, 2, ...
    kind: Mapped[str] = mapped_column(String(16))  # moderator | agent | silence | left
    seat: Mapped[int | None] = mapped_column(Integer)  # the seat spoken to (moderator) or speaking
    agent_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("agents.id"), index=True)
    action: Mapped[str | None] = mapped_column(String(16))  # a moderator's: question | probe | close
    guide_ref: Mapped[str | None] = mapped_column(String(16))  # the guide's question or probe ("q3", "p1")
    about: Mapped[int | None] = mapped_column(Integer)  # the utterance a probe follows up, by number
    text: Mapped[str | None] = mapped_column(Text)  # a moderator's words: the guide's, with seat labels only
    answer_ids: Mapped[list[int]] = mapped_column(JSONB, default=list)  # an agent's: its words, its stance
    reasons: Mapped[list[str]] = mapped_column(JSONB, default=list)  # a silence's: the tests it failed
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)  # a moderator's call (an agent's: its answers)
    cached_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
