"""The audit log's public face: its signed checkpoints, newest or all of them, and the key that signs them.

A witness or a participant fetches ``/v1/audit/checkpoints`` now and then and keeps what it gets;
``agentbank audit verify --witness FILE`` later checks the log against that copy, which nobody able to
rewrite the bank's database can change.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from sqlalchemy import select

from agentbank.audit.checkpoints import SignedCheckpoint, latest_checkpoint
from agentbank.audit.trust import TrustedKeys, read_retired
from agentbank.db.models import AuditCheckpoint
from agentbank.errors import NotFoundError
from app.api.audit.schemas import CheckpointHistory, CheckpointRead, PublicKeyRead, RetiredKeyRead
from app.api.deps import SessionDep, SettingsDep, SignerDep

router = APIRouter(prefix="/v1/audit", tags=["audit"])
PAGE = 1000


def _trusted(signer: SignerDep, settings: SettingsDep) -> TrustedKeys:
    """The keys a served checkpoint must be signed with: the current one and the retired ones, each in its time."""
    return TrustedKeys(signer.public_key, tuple(read_retired(settings)))


TrustedDep = Annotated[TrustedKeys, Depends(_trusted)]


@router.get("/checkpoint", response_model=CheckpointRead)
def checkpoint(session: SessionDep, keys: TrustedDep) -> CheckpointRead:
    """The newest signed checkpoint: anyone can later prove the log was not truncated before it."""
    point = latest_checkpoint(session, keys.verifies)
    if point is None:
        raise NotFoundError("no checkpoint has been published yet")
    return CheckpointRead.of(point)


@router.get("/checkpoints", response_model=CheckpointHistory)
def checkpoints(
    session: SessionDep,
    keys: TrustedDep,
    # Ids are PostgreSQL integers: a larger one is no id at all, refused as such rather than a 500.
    after: Annotated[int, Query(ge=0, le=2**31 - 1, description="Only checkpoints stored after this id")] = 0,
) -> CheckpointHistory:
    """Every signed checkpoint in the order it was signed, a page at a time: fetch it and keep it. A row the
    bank's keys did not sign (the application's role can add rows) is never served: a witness keeps only
    what the bank signed."""
    rows = session.scalars(
        select(AuditCheckpoint).where(AuditCheckpoint.id > after).order_by(AuditCheckpoint.id).limit(PAGE + 1)
    ).all()
    page = rows[:PAGE]
    signed = [row for row in page if keys.verifies(SignedCheckpoint.of(row))]
    return CheckpointHistory(
        checkpoints=[CheckpointRead.of(row) for row in signed], next_after=page[-1].id if len(rows) > PAGE else None
    )


@router.get("/public-key", response_model=PublicKeyRead)
def public_key(signer: SignerDep, settings: SettingsDep) -> PublicKeyRead:
    """The Ed25519 key that signs checkpoints, and the retired ones that signed earlier checkpoints."""
    retired = [RetiredKeyRead(**r.to_json()) for r in read_retired(settings)]
    return PublicKeyRead(key_id=signer.key_id, algorithm="Ed25519", public_key_pem=signer.public_pem(), retired=retired)
