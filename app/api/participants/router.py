"""The participant's own view (the portal grows here): who they are in the bank, and their agent's state."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy import select

from agentbank import audit
from agentbank.models import Agent, Participant
from app.api.deps import PrincipalDep, SessionDep, actor

router = APIRouter(prefix="/v1/participant", tags=["participants"])


class MeRead(BaseModel):
    pseudonym: str
    consent: str
    agent_status: str | None


@router.get("/me", response_model=MeRead)
def me(session: SessionDep, principal: PrincipalDep) -> MeRead:
    """The signed-in participant, and only them."""
    participant = session.get_one(Participant, principal.require_participant())
    audit.record(session, actor(principal), "participant.view", "participant", participant_id=participant.id)
    status = session.scalar(
        select(Agent.status).where(Agent.participant_id == participant.id).order_by(Agent.version.desc()).limit(1)
    )
    return MeRead(pseudonym=participant.pseudonym, consent=participant.consent, agent_status=status)
