"""Reviewers' approvals of a project, and the scope they agree on when more than one must approve.

With ``AGENTBANK_REVIEW_APPROVALS=2`` one reviewer cannot open individual answers alone: the first
approval is kept (the project stays ``submitted``, its approvals listed to reviewers), and the project
is approved when a second, different reviewer approves. Each approval states a scope; what is granted
is the narrowest scope both accept (agents and query types in both, the smaller limits, the earlier
expiry), so nobody gets more than every approving reviewer agreed to. A rejection by any reviewer is
final, whatever approvals came before it: one reviewer's doubt about harm to participants is enough.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.access.principals import Principal
from agentbank.access.scope import ProjectScope
from agentbank.core.errors import ConflictError, PermissionDeniedError
from agentbank.db.models import Client, ProjectApproval


def approve(
    session: Session, principal: Principal, project_id: uuid.UUID, scope: ProjectScope, note: str, needed: int
) -> ProjectScope | None:
    """Record this reviewer's approval; the agreed scope once ``needed`` reviewers approved, else None.

    The caller holds the project's row lock, so two reviewers approving at once are counted in turn.
    """
    if principal.pk is None:
        # Only a registered client can be told apart from another reviewer; alone it may still decide.
        if needed > 1:
            raise PermissionDeniedError("only a registered reviewer's approval counts where two must agree")
        return scope
    earlier = list(session.scalars(select(ProjectApproval).where(ProjectApproval.project_id == project_id)))
    if any(a.reviewer_pk == principal.pk for a in earlier):
        raise ConflictError("you already approved this project; another reviewer must approve it too")
    # The clock, not the transaction's start: approvals within one transaction still keep their order.
    approval = ProjectApproval(
        project_id=project_id, reviewer_pk=principal.pk, scope=scope.to_json(), note=note, approved_at=datetime.now(UTC)
    )
    session.add(approval)
    session.flush()
    if len(earlier) + 1 < needed:
        return None
    return ProjectScope.narrowest([ProjectScope.stored(a.scope) for a in earlier] + [scope])


def approver_ids(session: Session, project_id: uuid.UUID) -> list[str]:
    """The client ids of the reviewers who approved a project, in the order they did."""
    return list(
        session.scalars(
            select(Client.client_id)
            .join(ProjectApproval, ProjectApproval.reviewer_pk == Client.id)
            .where(ProjectApproval.project_id == project_id)
            .order_by(ProjectApproval.approved_at, Client.client_id)
        )
    )


__all__ = ["approve", "approver_ids"]
