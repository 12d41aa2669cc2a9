"""What a team sees of its own project: its jobs, and the notices the bank left for it.

A notice (a participant withdrew) is written to the outbox in the withdrawal's transaction; a member
reading the project's notices is its delivery: the first read marks it delivered, and the read is
audited like every other access.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.access.principals import Principal
from agentbank.access.projects import is_member
from agentbank.audit import log as audit
from agentbank.db.models import Job, OutboxEvent
from agentbank.errors import NotFoundError

RECENT_JOBS = 100


def _member(session: Session, principal: Principal, project_id: uuid.UUID) -> None:
    if principal.kind != "client" or not is_member(session, principal, project_id):
        raise NotFoundError("no such project")


def project_jobs(session: Session, principal: Principal, project_id: uuid.UUID) -> list[Job]:
    """The project's newest jobs, newest first (members only)."""
    _member(session, principal, project_id)
    newest = select(Job).where(Job.project_id == project_id).order_by(Job.created_at.desc(), Job.id).limit(RECENT_JOBS)
    return list(session.scalars(newest))


def project_notices(session: Session, principal: Principal, project_id: uuid.UUID) -> list[OutboxEvent]:
    """Every notice left for the project, oldest first; the first read by a member delivers them. Audited."""
    _member(session, principal, project_id)
    notices = list(
        session.scalars(select(OutboxEvent).where(OutboxEvent.project_id == project_id).order_by(OutboxEvent.id))
    )
    now = datetime.now(UTC)
    delivered = [n for n in notices if n.delivered_at is None]
    for notice in delivered:
        notice.delivered_at = now
    audit.record(session, audit.Actor(*principal.audit_actor), "project.notices.read", "restricted",
                 project_id=project_id, details={"notices": len(notices), "new": len(delivered)})  # fmt: skip
    return notices
