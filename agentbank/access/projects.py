"""The restricted tier's gate: project applications, review decisions, and the scope every job must fit.

A job is checked against its project before any model is called: membership, approval, expiry,
agents in scope, query type, agents per job and the total query quota.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from agentbank.access import approvals as approvals_service
from agentbank.access.principals import INDIVIDUAL_QUERY, PROJECTS_APPLY, REVIEW, Principal
from agentbank.audit import log as audit
from agentbank.db.models import Client, Project, ProjectMember
from agentbank.errors import InvalidRequestError, NotFoundError, PermissionDeniedError
from agentbank.statuses import ProjectStatus, move

QueryType = Literal["survey", "open", "experiment"]  # what a project is approved for, one per request kind
QUERY_TYPES: tuple[str, ...] = get_args(QueryType)


class QuotaExceededError(PermissionDeniedError):
    """The project's total query quota would be exceeded."""

    code = "quota_exceeded"


class ProjectExpiredError(PermissionDeniedError):
    """The project's approval has expired."""

    code = "project_expired"


class OutOfScopeError(PermissionDeniedError):
    """The job asks for agents or query types the project was not approved for."""

    code = "out_of_scope"


@dataclass(frozen=True)
class Application:
    """What a team asks for."""

    title: str
    purpose: str
    harms: str
    members: list[str]  # client ids, the applicant included or not
    agents: list[uuid.UUID] | None  # None: any active agent
    query_types: list[str]


@dataclass(frozen=True)
class Grant:
    """What a reviewer approves."""

    agents: list[uuid.UUID] | None
    query_types: list[str]
    max_agents_per_job: int
    quota: int
    expires_at: datetime


def apply(session: Session, principal: Principal, application: Application) -> Project:
    """Submit an application; the applicant is its PI and a member."""
    principal.require(PROJECTS_APPLY)
    if not set(application.query_types) <= set(QUERY_TYPES) or not application.query_types:
        raise InvalidRequestError(f"query types must be among {', '.join(QUERY_TYPES)}")
    members = session.scalars(select(Client).where(Client.client_id.in_(application.members))).all()
    missing = sorted(set(application.members) - {m.client_id for m in members})
    if missing:
        raise InvalidRequestError(f"unknown members: {', '.join(missing)}")
    project = Project(
        title=application.title,
        purpose=application.purpose,
        harms=application.harms,
        pi_pk=principal.pk,
        requested={
            "agents": [str(a) for a in application.agents] if application.agents is not None else None,
            "query_types": application.query_types,
        },
    )
    session.add(project)
    session.flush()
    for pk in {principal.pk, *(m.id for m in members)}:
        session.add(ProjectMember(project_id=project.id, client_pk=pk))
    audit.record(
        session, audit.Actor(*principal.audit_actor), "project.apply", "restricted", project_id=project.id,
        details={"purpose": application.purpose, "query_types": application.query_types},
    )  # fmt: skip
    session.flush()
    return project


def decide(
    session: Session, principal: Principal, project_id: uuid.UUID, grant: Grant | None, note: str, approvals: int = 1
) -> Project:
    """Approve an application with a scope, or reject it (``grant`` None). Decisions are final.

    With ``approvals`` 2, an approval waits (the project stays submitted) until a second, different
    reviewer approves too; the project then gets the narrowest scope both granted. A rejection is final.
    """
    principal.require(REVIEW)
    project = session.get(Project, project_id, with_for_update=True)
    if project is None:
        raise NotFoundError("no such project")
    decision = move(project.status, ProjectStatus.APPROVED if grant else ProjectStatus.REJECTED, "the project")
    if project.pi_pk == principal.pk or is_member(session, principal, project_id):
        # A reviewer on the team would approve their own access, then query with it.
        raise PermissionDeniedError("reviewers cannot decide on a project they belong to")
    if grant is not None:
        if grant.expires_at <= datetime.now(UTC):
            raise InvalidRequestError("the approval must expire in the future")
        if grant.max_agents_per_job < 1 or grant.quota < 1:
            raise InvalidRequestError("max agents per job and quota must be positive")
        scope = {
            "agents": [str(a) for a in grant.agents] if grant.agents is not None else None,
            "query_types": grant.query_types,
            "max_agents_per_job": grant.max_agents_per_job,
            "quota": grant.quota,
            "expires_at": grant.expires_at.astimezone(UTC).isoformat(),
        }
        agreed = approvals_service.approve(session, principal, project.id, scope, note, approvals)
        if agreed is None:
            audit.record(
                session, audit.Actor(*principal.audit_actor), "project.approval", "restricted",
                project_id=project.id, details={"scope": scope, "note": note, "approvals_needed": approvals},
            )  # fmt: skip
            return project
        project.scope = agreed
    project.status = decision
    project.decided_by, project.decided_at, project.decision_note = principal.pk, datetime.now(UTC), note
    audit.record(
        session, audit.Actor(*principal.audit_actor), f"project.{project.status}", "restricted",
        project_id=project.id, details={"scope": project.scope, "note": note},
    )  # fmt: skip
    return project


def is_member(session: Session, principal: Principal, project_id: uuid.UUID) -> bool:
    """Whether the principal may act for the project."""
    return bool(
        session.scalar(
            select(exists().where(ProjectMember.project_id == project_id, ProjectMember.client_pk == principal.pk))
        )
    )


def visible_project(session: Session, principal: Principal, project_id: uuid.UUID) -> Project:
    """A project the principal may see: members see their own, reviewers see all. Others get 404."""
    project = session.get(Project, project_id)
    if project is not None and (REVIEW in principal.scopes or is_member(session, principal, project_id)):
        return project
    raise NotFoundError("no such project")


def member_ids(session: Session, project_id: uuid.UUID) -> list[str]:
    """The client ids of a project's members (its PI among them)."""
    return sorted(
        session.scalars(
            select(Client.client_id)
            .join(ProjectMember, ProjectMember.client_pk == Client.id)
            .where(ProjectMember.project_id == project_id)
        )
    )


def projects_for(session: Session, principal: Principal) -> list[Project]:
    """Projects the principal may see, newest first."""
    query = select(Project).order_by(Project.created_at.desc())
    if REVIEW not in principal.scopes:
        query = query.join(ProjectMember, ProjectMember.project_id == Project.id).where(
            ProjectMember.client_pk == principal.pk
        )
    return list(session.scalars(query))


def authorize_job(
    session: Session,
    principal: Principal,
    project_id: uuid.UUID,
    query_type: str,
    agents: list[uuid.UUID],
    queries: int,
) -> Project:
    """The project, locked, if this job fits its approval; raises the precise refusal otherwise."""
    principal.require(INDIVIDUAL_QUERY)
    if not is_member(session, principal, project_id):
        raise NotFoundError("no such project")
    project = session.get(Project, project_id, with_for_update=True)
    assert project is not None  # membership implies the project exists
    if project.status != ProjectStatus.APPROVED:
        raise PermissionDeniedError(f"the project is {project.status}, not approved")
    scope: dict[str, Any] = project.scope
    if datetime.fromisoformat(scope["expires_at"]) <= datetime.now(UTC):
        raise ProjectExpiredError("the project's approval has expired")
    if query_type not in scope["query_types"]:
        raise OutOfScopeError(f"the project is not approved for {query_type} queries")
    if scope["agents"] is not None and not {str(a) for a in agents} <= set(scope["agents"]):
        raise OutOfScopeError("the job asks for agents outside the project's approved subset")
    if len(agents) > scope["max_agents_per_job"]:
        raise OutOfScopeError(f"a job may ask at most {scope['max_agents_per_job']} agents")
    if project.quota_used + queries > scope["quota"]:
        left = scope["quota"] - project.quota_used
        raise QuotaExceededError(f"the job needs {queries} queries; {left} remain in the project's quota")
    return project
