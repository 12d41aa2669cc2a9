"""The participant's portal: who they are in the bank, who used their agent and how, their transcript,
and withdrawal. Every route acts on the signed-in participant only; none takes another person's id."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field
from starlette.responses import PlainTextResponse

from agentbank.audit.signing_keys import load_signer
from agentbank.participants import portal, withdrawal
from agentbank.participants.ledger import WithdrawalLedger
from agentbank.studies import contacts
from app.api.deps import BankDep, PrincipalDep, SessionDep, actor
from app.api.errors import ErrorBody

router = APIRouter(prefix="/v1/participant", tags=["participants"])


async def _participant_id(principal: PrincipalDep) -> uuid.UUID:
    # A dependency, so that callers who are not participants are refused before their body is read.
    return principal.require_participant()


ParticipantId = Annotated[uuid.UUID, Depends(_participant_id)]


class MeRead(BaseModel):
    pseudonym: str
    consent: str
    agent_status: str | None


class AuditReceiptRead(BaseModel):
    seq: int | None = Field(
        description="The event's place in the audit log; null for a few seconds, until the event is chained"
    )
    hash: str | None = Field(description="The event's hash (hex): it is chained into every later signed checkpoint")
    prev_hash: str | None


class UseRead(BaseModel):
    at: datetime
    action: str
    tier: str
    actor_kind: str
    project: dict[str, Any] | None = Field(description="The team's project: id, title and approved purpose")
    purpose: str | None = Field(default=None, description="Why the agent was asked, as the asker stated it")
    asked: dict[str, Any] = Field(description="Item keys, or hashes of open questions")
    outcome: str | None = Field(
        description="released, withheld, unavailable, aggregate, operator, evaluation, or a reviewer's decision"
    )
    receipt: AuditReceiptRead


class ContactWrite(BaseModel):
    email: str | None = Field(
        max_length=254, description="Where to send the retest reminder; null removes it. Kept sealed with your key."
    )


class WithdrawCreate(BaseModel):
    confirm: Literal[True] = Field(description="Must be true: withdrawal cannot be undone")


class WithdrawRead(BaseModel):
    status: Literal["withdrawn"]
    agents: int
    tasks_cancelled: int
    projects_notified: int


@router.get("/me", response_model=MeRead)
def me(session: SessionDep, principal: PrincipalDep, participant_id: ParticipantId) -> MeRead:
    """The signed-in participant, and only them."""
    participant, status = portal.profile(session, participant_id, actor(principal))
    return MeRead(pseudonym=participant.pseudonym, consent=participant.consent, agent_status=status)


@router.get("/audit", response_model=list[UseRead])
def audit_trail(session: SessionDep, principal: PrincipalDep, participant_id: ParticipantId) -> list[UseRead]:
    """Every use of one's agent: when, by which project and for what purpose, what was asked, what came of it,
    with a receipt to check against ``GET /v1/audit/checkpoint``."""
    uses = portal.uses_of_agent(session, participant_id, actor(principal))
    return [
        UseRead(
            at=u.at,
            action=u.action,
            tier=u.tier,
            actor_kind=u.actor_kind,
            project=u.project,
            purpose=u.purpose,
            asked=u.asked,
            outcome=u.outcome,
            receipt=AuditReceiptRead(seq=u.seq, hash=u.hash, prev_hash=u.prev_hash),
        )
        for u in uses
    ]


# No response_class here: with one, FastAPI documents the JSON error bodies as text/plain too.
@router.get(
    "/transcript",
    responses={
        200: {"content": {"text/plain": {}}, "description": "The transcript as text"},
        410: {"model": ErrorBody, "description": "withdrawn: the transcript is unreadable for good"},
    },
)
def transcript(
    session: SessionDep, principal: PrincipalDep, participant_id: ParticipantId, bank: BankDep
) -> PlainTextResponse:
    """One's own interview as a text file (gone for good after withdrawal: 410)."""
    text = portal.transcript_text(session, bank.keys, participant_id, actor(principal))
    return PlainTextResponse(
        text, headers={"Content-Disposition": 'attachment; filename="my-interview.txt"', "Cache-Control": "no-store"}
    )


@router.post("/withdraw", response_model=WithdrawRead)
def withdraw(
    body: WithdrawCreate, session: SessionDep, principal: PrincipalDep, participant_id: ParticipantId, bank: BankDep
) -> WithdrawRead:
    """Withdraw from the bank, at once: the agent answers nothing more, and one's data key is destroyed."""
    ledger = WithdrawalLedger.of(bank.settings, load_signer(bank.settings))
    receipt = withdrawal.withdraw(session, bank.keys, participant_id, actor(principal), ledger=ledger)
    return WithdrawRead(
        status="withdrawn", agents=receipt.agents, tasks_cancelled=receipt.tasks_cancelled,
        projects_notified=receipt.projects_notified,
    )  # fmt: skip


@router.put("/contact", status_code=204, responses={404: {"model": ErrorBody, "description": "not in a study"}})
def leave_contact(
    body: ContactWrite, session: SessionDep, principal: PrincipalDep, participant_id: ParticipantId, bank: BankDep
) -> None:
    """Leave (or remove) an address for the retest reminder of one's study; nobody can read it back over the API."""
    contacts.leave_contact(session, bank.keys, participant_id, body.email, actor(principal))
