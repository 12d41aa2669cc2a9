"""The restricted tier's gate: project applications, review decisions, and the scope every job must fit.

A project names its team; each named client accepts (``respond``) before it is a member, and the
project waits (``forming``) until every one has, so nobody is put on a team, or kept off reviewing
it, without their consent. A job is checked against its project before any model is called:
membership, approval, expiry, agents in scope, query type, agents per job and the total query quota.
Every read of a project's details is audited in the caller's transaction (``read_project``,
``projects_for``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, get_args

from sqlalchemy import exists, func, select
from sqlalchemy.orm import Session

from agentbank.access import duties
from agentbank.access.principals import INDIVIDUAL_QUERY, PROJECTS_APPLY, REVIEW, Principal
from agentbank.access.scope import ProjectScope
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import ConflictError, InvalidRequestError, NotFoundError, PermissionDeniedError
from agentbank.core.statuses import AgentStatus, ConsentStatus, ProjectStatus, move
from agentbank.db.models import Agent, Client, Participant, Project, ProjectMember, TeamInstrument
from agentbank.instruments.team import split_ref
from agentbank.restricted import approvals as approvals_service

# What a project is approved for, one per request kind.
QueryType = Literal["survey", "open", "experiment", "focus_group"]
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


def apply(session: Session, principal: Principal, application: Application) -> Project:
    """Make an application; the applicant is its PI and a member. It is submitted for review once every
    other client it names has accepted (``respond``); until then it is ``forming``."""
    principal.require(PROJECTS_APPLY)
    if not set(application.query_types) <= set(QUERY_TYPES) or not application.query_types:
        raise InvalidRequestError(f"query types must be among {', '.join(QUERY_TYPES)}")
    members = session.scalars(select(Client).where(Client.client_id.in_(application.members))).all()
    missing = sorted(set(application.members) - {m.client_id for m in members})
    if missing:
        raise InvalidRequestError(f"unknown members: {', '.join(missing)}")
    invited = {m.id for m in members} - {principal.pk}
    project = Project(
        title=application.title,
        purpose=application.purpose,
        harms=application.harms,
        pi_pk=principal.pk,
        requested={
            "agents": [str(a) for a in application.agents] if application.agents is not None else None,
            "query_types": application.query_types,
        },
        status=ProjectStatus.FORMING if invited else ProjectStatus.SUBMITTED,
    )
    session.add(project)
    session.flush()
    now = datetime.now(UTC)
    session.add(ProjectMember(project_id=project.id, client_pk=principal.pk, accepted_at=now))
    for pk in invited:
        session.add(ProjectMember(project_id=project.id, client_pk=pk))
    audit.record(
        session, principal.actor, "project.apply", Tier.RESTRICTED, project_id=project.id,
        details={"purpose": application.purpose, "query_types": application.query_types, "invited": len(invited)},
    )  # fmt: skip
    session.flush()
    return project


def decide(
    session: Session,
    principal: Principal,
    project_id: uuid.UUID,
    scope: ProjectScope | None,
    note: str,
    approvals: int = 1,
) -> Project:
    """Approve an application with a scope, or reject it (``scope`` None). Decisions are final.

    With ``approvals`` 2, an approval waits (the project stays submitted) until a second, different
    reviewer approves too; the project then gets the narrowest scope both granted. A rejection is final.
    """
    principal.require(REVIEW)
    project = session.get(Project, project_id, with_for_update=True)
    if project is None:
        raise NotFoundError("no such project")
    if project.status == ProjectStatus.FORMING:
        raise ConflictError("the project waits for the members it names to accept; it cannot be decided yet")
    decision = move(project.status, ProjectStatus.APPROVED if scope else ProjectStatus.REJECTED, "the project")
    # A reviewer on the team (or invited to it) would approve their own access, or their own instrument, then
    # query with it.
    duties.require_independent(session, principal, project_id, "decide on the application or its instruments")
    if scope is not None:
        if scope.expired():
            raise InvalidRequestError("the approval must expire in the future")
        _require_versions(session, project.id, scope.instruments)
        agreed = approvals_service.approve(session, principal, project.id, scope, note, approvals)
        if agreed is None:
            audit.record(
                session, principal.actor, "project.approval", Tier.RESTRICTED,
                project_id=project.id, details={"scope": scope.to_json(), "note": note, "approvals_needed": approvals},
            )  # fmt: skip
            return project
        project.scope = agreed.to_json()
    project.status = decision
    project.decided_by, project.decided_at, project.decision_note = principal.pk, datetime.now(UTC), note
    audit.record(
        session, principal.actor, f"project.{project.status}", Tier.RESTRICTED,
        project_id=project.id, details={"scope": project.scope, "note": note},
    )  # fmt: skip
    return project


def _require_versions(session: Session, project_id: uuid.UUID, refs: tuple[str, ...]) -> None:
    """An approval names only versions of instruments the project has (``key@version``)."""
    for ref in refs:
        parts = split_ref(ref)
        held = parts is not None and session.scalar(
            select(func.count()).where(TeamInstrument.project_id == project_id, TeamInstrument.key == parts[0],
                                       TeamInstrument.version == parts[1])
        )  # fmt: skip
        if not held:
            raise InvalidRequestError(f"the project has no instrument version {ref!r} to approve")


def is_member(session: Session, principal: Principal, project_id: uuid.UUID) -> bool:
    """Whether the principal may act for the project: named on it, and accepted."""
    named = exists().where(ProjectMember.project_id == project_id, ProjectMember.client_pk == principal.pk,
                           ProjectMember.accepted_at.is_not(None))  # fmt: skip
    return bool(session.scalar(select(named)))


def _named(session: Session, principal: Principal, project_id: uuid.UUID) -> ProjectMember | None:
    return session.get(ProjectMember, (project_id, principal.pk)) if principal.pk is not None else None


def visible_project(session: Session, principal: Principal, project_id: uuid.UUID) -> Project:
    """A project the principal may see: the clients it names see it (to accept, or as members), reviewers
    see all. Others get 404. Not audited: ``read_project`` is the read of its details."""
    project = session.get(Project, project_id)
    if project is not None and (REVIEW in principal.scopes or _named(session, principal, project_id) is not None):
        return project
    raise NotFoundError("no such project")


def read_project(session: Session, principal: Principal, project_id: uuid.UUID) -> Project:
    """A project's details for one who may see them (``visible_project``), the read audited."""
    project = visible_project(session, principal, project_id)
    audit.record(session, principal.actor, "project.read", Tier.RESTRICTED, project_id=project.id)
    return project


def respond(session: Session, principal: Principal, project_id: uuid.UUID, accept: bool) -> Project:
    """A named client accepts its place on the project's team, or declines it (its name is removed);
    audited. Once no invitation waits, a forming project is submitted for review."""
    project = session.get(Project, project_id, with_for_update=True)
    named = _named(session, principal, project_id)
    if project is None or named is None:
        raise NotFoundError("no such project")
    if named.accepted_at is not None:
        raise ConflictError("you are a member of this project already")
    if accept:
        named.accepted_at = datetime.now(UTC)
    else:
        session.delete(named)
    session.flush()
    actor = principal.actor
    audit.record(session, actor, "project.member." + ("accept" if accept else "decline"), Tier.RESTRICTED,
                 project_id=project.id)  # fmt: skip
    waiting = select(exists().where(ProjectMember.project_id == project.id, ProjectMember.accepted_at.is_(None)))
    if project.status == ProjectStatus.FORMING and not session.scalar(waiting):
        project.status = move(project.status, ProjectStatus.SUBMITTED, "the project")
        audit.record(session, actor, "project.submitted", Tier.RESTRICTED, project_id=project.id)
    return project


def member_ids(session: Session, project_id: uuid.UUID, *, accepted: bool = True) -> list[str]:
    """The client ids of a project's members (its PI among them), or with ``accepted`` false those invited
    who have not accepted yet."""
    answered = ProjectMember.accepted_at.is_not(None) if accepted else ProjectMember.accepted_at.is_(None)
    return sorted(
        session.scalars(
            select(Client.client_id)
            .join(ProjectMember, ProjectMember.client_pk == Client.id)
            .where(ProjectMember.project_id == project_id, answered)
        )
    )


def projects_for(session: Session, principal: Principal) -> list[Project]:
    """Projects the principal may see (named on, or all for a reviewer), newest first; the read audited."""
    query = select(Project).order_by(Project.created_at.desc())
    if REVIEW not in principal.scopes:
        query = query.join(ProjectMember, ProjectMember.project_id == Project.id).where(
            ProjectMember.client_pk == principal.pk
        )
    found = list(session.scalars(query))
    audit.record(session, principal.actor, "project.list", Tier.RESTRICTED,
                 details={"projects": len(found)})  # fmt: skip
    return found


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
    scope = ProjectScope.stored(project.scope)
    if scope.expired():
        raise ProjectExpiredError("the project's approval has expired")
    if query_type not in scope.query_types:
        raise OutOfScopeError(f"the project is not approved for {query_type} queries")
    if not all(scope.covers(a) for a in agents):
        raise OutOfScopeError("the job asks for agents outside the project's approved subset")
    if len(agents) > scope.max_agents_per_job:
        raise OutOfScopeError(f"a job may ask at most {scope.max_agents_per_job} agents")
    if project.quota_used + queries > scope.quota:
        left = scope.quota - project.quota_used
        raise QuotaExceededError(f"the job needs {queries} queries; {left} remain in the project's quota")
    return project


def project_agents(session: Session, project: Project) -> list[Agent]:
    """The active agents an approved project may query, in a stable order."""
    if project.status != ProjectStatus.APPROVED:
        raise PermissionDeniedError(f"the project is {project.status}, not approved")
    query = (
        select(Agent)
        .join(Participant, Participant.id == Agent.participant_id)
        .where(Agent.status == AgentStatus.ACTIVE, Participant.consent == ConsentStatus.CONSENTED)
        .order_by(Agent.id)
    )
    allowed = ProjectScope.stored(project.scope).agents
    if allowed is not None:
        query = query.where(Agent.id.in_(allowed))
    return list(session.scalars(query))
