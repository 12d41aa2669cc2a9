"""What a team sees of its own project: its agents with their cards, its jobs, and the notices the bank left
for it.

A notice (a participant withdrew) is written to the outbox in the withdrawal's transaction. Reading
the notices changes nothing (a page of another site can send a reader to a URL, and a GET must stay
safe): a member marks one read (``mark_read``, a POST), and that first mark is its delivery. Every read
of the jobs and the notices, and every mark, is audited like every other access.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.access.principals import Principal
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.building.validity.cards import Card, latest_cards
from agentbank.core.errors import NotFoundError
from agentbank.db.models import Agent, Job, OutboxEvent
from agentbank.keys.crypto import KeyRing
from agentbank.restricted.projects import is_member, project_agents, visible_project

RECENT_JOBS = 100


def _member(session: Session, principal: Principal, project_id: uuid.UUID) -> None:
    if principal.kind != "client" or not is_member(session, principal, project_id):
        raise NotFoundError("no such project")


def project_agents_with_cards(
    session: Session, keys: KeyRing, principal: Principal, project_id: uuid.UUID
) -> list[tuple[Agent, list[Card]]]:
    """The agents an approved project may query (members only), each with its report cards; the read of
    the cards (figures about each agent's person) audited."""
    _member(session, principal, project_id)
    agents = project_agents(session, visible_project(session, principal, project_id))
    cards = latest_cards(session, keys, [a.id for a in agents])
    audit.record(session, principal.actor, "project.agents.list", Tier.RESTRICTED,
                 project_id=project_id, details={"agents": len(agents)})  # fmt: skip
    return [(agent, cards.get(agent.id, [])) for agent in agents]


def project_jobs(session: Session, principal: Principal, project_id: uuid.UUID) -> list[Job]:
    """The project's newest jobs, newest first (members only); the read audited."""
    _member(session, principal, project_id)
    newest = select(Job).where(Job.project_id == project_id).order_by(Job.created_at.desc(), Job.id).limit(RECENT_JOBS)
    jobs = list(session.scalars(newest))
    audit.record(session, principal.actor, "project.jobs.list", Tier.RESTRICTED,
                 project_id=project_id, details={"jobs": len(jobs)})  # fmt: skip
    return jobs


def project_notices(session: Session, principal: Principal, project_id: uuid.UUID) -> list[OutboxEvent]:
    """Every notice left for the project, oldest first (members only); the read audited, nothing changed."""
    _member(session, principal, project_id)
    notices = list(
        session.scalars(select(OutboxEvent).where(OutboxEvent.project_id == project_id).order_by(OutboxEvent.id))
    )
    unread = sum(n.delivered_at is None for n in notices)
    audit.record(session, principal.actor, "project.notices.read", Tier.RESTRICTED,
                 project_id=project_id, details={"notices": len(notices), "unread": unread})  # fmt: skip
    return notices


def mark_read(session: Session, principal: Principal, project_id: uuid.UUID, notice_id: int) -> OutboxEvent:
    """A member marks a notice read: the first mark is its delivery (kept; a second changes nothing). Audited."""
    _member(session, principal, project_id)
    notice = session.get(OutboxEvent, notice_id, with_for_update=True)
    if notice is None or notice.project_id != project_id:
        raise NotFoundError("no such notice")
    first = notice.delivered_at is None
    if first:
        notice.delivered_at = datetime.now(UTC)
    audit.record(session, principal.actor, "project.notice.delivered", Tier.RESTRICTED,
                 project_id=project_id, details={"notice": notice.id, "first": first})  # fmt: skip
    return notice
