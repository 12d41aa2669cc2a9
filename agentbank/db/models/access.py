"""Who may use the bank: OAuth2 clients and their tokens, projects, reviews and memberships."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import DateTime, ForeignKey, Integer, LargeBinary, String, Text, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.core.statuses import ClientStatus, ProjectStatus, StatusColumn
from agentbank.db.base import Base


class Client(Base):
    """An OAuth2 client (a researcher, a team member, a reviewer, an operator) with its scopes."""

    __tablename__ = "clients"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    client_id: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    secret_hash: Mapped[bytes] = mapped_column(LargeBinary)
    scopes: Mapped[list[str]] = mapped_column(JSONB, default=list)
    status: Mapped[ClientStatus] = mapped_column(StatusColumn(ClientStatus), default=ClientStatus.ACTIVE)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Person(Base):
    """Someone who signs in to the consoles through the identity provider, as an API client's principal."""

    __tablename__ = "people"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    # Lower-cased; matched against the provider's verified email claim.
    email: Mapped[str] = mapped_column(String(320), unique=True)
    client_pk: Mapped[uuid.UUID] = mapped_column(ForeignKey("clients.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class AccessToken(Base):
    """An opaque bearer token, stored only as its hash so a database leak yields no usable token."""

    __tablename__ = "access_tokens"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # A token belongs to a client or to a participant (their portal session), never both.
    client_pk: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("clients.id"), index=True)
    participant_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("participants.id"), index=True)
    # A person's console session (a cookie), signed in through the identity provider as the client's principal.
    person_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("people.id"), index=True)
    scopes: Mapped[list[str]] = mapped_column(JSONB, default=list)
    issued_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Project(Base):
    """An application for the restricted tier and, once reviewed, its approved scope."""

    __tablename__ = "projects"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    title: Mapped[str] = mapped_column(String(200))
    purpose: Mapped[str] = mapped_column(Text)
    harms: Mapped[str] = mapped_column(Text)
    pi_pk: Mapped[uuid.UUID] = mapped_column(ForeignKey("clients.id"))
    # What the applicants asked for: agent ids (or None for any) and query types.
    requested: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    status: Mapped[ProjectStatus] = mapped_column(StatusColumn(ProjectStatus), default=ProjectStatus.SUBMITTED)
    # What the reviewer granted: agents, query_types, max_agents_per_job, quota, expires_at.
    scope: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    quota_used: Mapped[int] = mapped_column(Integer, default=0)
    decided_by: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("clients.id"))
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    decision_note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ProjectMember(Base):
    """A client named on a project; it may act for the project once it accepted (``accepted_at``)."""

    __tablename__ = "project_members"

    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id"), primary_key=True)
    client_pk: Mapped[uuid.UUID] = mapped_column(ForeignKey("clients.id"), primary_key=True)
    # When the member accepted (the applicant at once); null while the invitation waits.
    accepted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ProjectApproval(Base):
    """One reviewer's approval of a project and the scope they would grant (insert-only for the bank).

    Where two reviewers must agree, the first approval waits here; the project is approved with the
    narrowest scope both granted when a second, different reviewer approves.
    """

    __tablename__ = "project_approvals"

    project_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("projects.id"), primary_key=True)
    reviewer_pk: Mapped[uuid.UUID] = mapped_column(ForeignKey("clients.id"), primary_key=True)
    scope: Mapped[dict[str, Any]] = mapped_column(JSONB)
    note: Mapped[str] = mapped_column(Text, default="")
    approved_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
