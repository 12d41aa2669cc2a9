"""Restricted-tier jobs, their per-agent results, and the population answers behind the open tier."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer, LargeBinary, String, UniqueConstraint, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.core.statuses import JobStatus, StatusColumn, TaskStatus
from agentbank.db.base import Base


class Job(Base):
    """Survey items or open questions for a set of agents, submitted once per idempotency key."""

    __tablename__ = "jobs"
    __table_args__ = (UniqueConstraint("client_pk", "idempotency_key"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id"), index=True)
    client_pk: Mapped[uuid.UUID] = mapped_column(ForeignKey("clients.id"))
    idempotency_key: Mapped[str] = mapped_column(String(200))
    request_hash: Mapped[str] = mapped_column(String(64))
    request: Mapped[dict[str, Any]] = mapped_column(JSONB)
    status: Mapped[JobStatus] = mapped_column(StatusColumn(JobStatus), default=JobStatus.QUEUED)
    total: Mapped[int] = mapped_column(Integer)
    done: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The newest dry run of exactly this request before it was submitted (``jobs.estimates``), if any.
    estimate: Mapped[dict[str, Any] | None] = mapped_column(JSONB)


class JobEstimate(Base):
    """A dry run's figures (calls, tokens, price, time) for a request in a project, for the job that follows."""

    __tablename__ = "job_estimates"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id"), index=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    figures: Mapped[dict[str, Any]] = mapped_column(JSONB)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class JobResult(Base):
    """One agent's answers for a job, written exactly once; the answers stay encrypted in ``answers``."""

    __tablename__ = "job_results"
    __table_args__ = (UniqueConstraint("job_id", "agent_id"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    job_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("jobs.id"))
    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id"))
    answer_ids: Mapped[list[int]] = mapped_column(JSONB, default=list)
    # Of those, the answers the model made for this job (the rest came from the answer cache).
    made_ids: Mapped[list[int]] = mapped_column(JSONB, default=list, server_default="[]")
    status: Mapped[TaskStatus] = mapped_column(StatusColumn(TaskStatus), default=TaskStatus.RELEASED)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class PopulationAnswer(Base):
    """An active agent's coded answers to one fixed instrument's items, precomputed for the open tier.

    The answers are a JSON object ``{item: [code, value]}`` sealed with the participant's data key: the
    release cut opens them in memory, and a withdrawal leaves only ciphertext nothing opens.
    """

    __tablename__ = "population_answers"

    agent_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("agents.id"), primary_key=True)
    instrument: Mapped[str] = mapped_column(String(32), primary_key=True)
    answers_encrypted: Mapped[bytes] = mapped_column(LargeBinary)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
