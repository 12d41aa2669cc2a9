"""Reviewers' queue of restricted answers the output check withheld: read them, release or keep them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from agentbank.access.principals import REVIEW
from agentbank.consultation.output_check import withheld
from agentbank.core.statuses import WithheldStatus
from app.api.deps import BankDep, PrincipalDep, SessionDep, require
from app.api.review.schemas import DecisionRead, WithheldDecisionCreate, WithheldRead

router = APIRouter(prefix="/v1/review", tags=["review"], dependencies=[require(REVIEW)])


@router.get("/withheld", response_model=list[WithheldRead])
def list_withheld(
    session: SessionDep, principal: PrincipalDep, bank: BankDep,
    status: WithheldStatus = WithheldStatus.PENDING,
) -> list[WithheldRead]:  # fmt: skip
    """Withheld answers (pending ones by default), oldest first; reading them is audited."""
    held = withheld.queue(session, bank.keys, principal, status)
    return [WithheldRead.model_validate(h, from_attributes=True) for h in held]


# The id is a PostgreSQL integer: anything beyond it is no such answer (422), not a database error.
WithheldId = Annotated[int, Path(ge=1, le=2**31 - 1)]


@router.post("/withheld/{withheld_id}", response_model=DecisionRead)
def decide(
    withheld_id: WithheldId, body: WithheldDecisionCreate, session: SessionDep, principal: PrincipalDep
) -> DecisionRead:
    """Release a withheld answer to its team, or keep it withheld; audited."""
    row = withheld.decide(session, principal, withheld_id, body.decision == "release", body.note)
    return DecisionRead(id=row.id, status=row.status, decided_at=row.decided_at)
