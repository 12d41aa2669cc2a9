"""Separation of duties: nobody reviews, approves or releases anything for a project they are on.

A client named on a project, as its applicant or as a member (invited or accepted), is disqualified
from its application's decision, from the approval of its instruments (which is part of that decision)
and from the reviewer queue's withheld answers of it: a reviewer on the team would release to
themselves what the output check held back. A client holding both ``review`` and ``individual:query``
is no exception. Where the first reviewer is disqualified, another reviewer decides.
"""

from __future__ import annotations

import uuid

from sqlalchemy import Select, or_, select
from sqlalchemy.orm import Session

from agentbank.access.principals import Principal
from agentbank.core.errors import PermissionDeniedError
from agentbank.db.models import Project, ProjectMember


def projects_of(principal: Principal) -> Select[uuid.UUID]:
    """The ids of the projects the principal is named on (applicant or member, accepted or not)."""
    if principal.pk is None:
        return select(Project.id).where(Project.id.is_(None))  # a client the bank does not know is on none
    named = select(ProjectMember.project_id).where(ProjectMember.client_pk == principal.pk)
    return select(Project.id).where(or_(Project.pi_pk == principal.pk, Project.id.in_(named)))


def is_disqualified(session: Session, principal: Principal, project_id: uuid.UUID) -> bool:
    """Whether the principal is named on the project, and so may not review anything of it."""
    return session.scalar(select(projects_of(principal).where(Project.id == project_id).exists())) is True


def require_independent(session: Session, principal: Principal, project_id: uuid.UUID, what: str) -> None:
    """Refuse (403) a review of ``what`` by a principal named on the project."""
    if is_disqualified(session, principal, project_id):
        raise PermissionDeniedError(f"reviewers cannot {what} for a project they are named on: another reviewer must")


__all__ = ["is_disqualified", "projects_of", "require_independent"]
