"""The audit log's public face: its signed checkpoints, newest or all of them, and the key that signs them.

A witness or a participant fetches ``/v1/audit/checkpoints`` now and then and keeps what it gets;
``agentbank audit verify --witness FILE`` later checks the log against that copy, which nobody able to
rewrite the bank's database can change.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field
from sqlalchemy import select

from agentbank.audit_trust import read_retired
from agentbank.checkpoints import SignedCheckpoint, latest_checkpoint
from agentbank.errors import NotFoundError
from agentbank.models import AuditCheckpoint
from app.api.deps import SessionDep, SettingsDep, SignerDep

router = APIRouter(prefix="/v1/audit", tags=["audit"])
PAGE = 1000


class CheckpointRead(BaseModel):
    seq: int
    head_hash: str
    signed_at: datetime
    key_id: str
    signature: str

    @classmethod
    def of(cls, point: AuditCheckpoint | SignedCheckpoint) -> CheckpointRead:
        """The published form of a checkpoint (hashes and signature in hex)."""
        return cls(
            seq=point.seq, head_hash=point.head_hash.hex(), signed_at=point.signed_at, key_id=point.key_id,
            signature=point.signature.hex(),
        )  # fmt: skip


class CheckpointHistory(BaseModel):
    checkpoints: list[CheckpointRead]
    next_after: int | None  # pass as ``after`` for the next page; null on the last one


class RetiredKeyRead(BaseModel):
    key_id: str
    public_key_pem: str
    retired_at: datetime = Field(description="Checkpoints it signed after this (and a minute's grace) are refused")
    successor: str = Field(description="The key id it handed over to")
    handover: str = Field(description="Its Ed25519 signature (hex) over the rotation statement")


class PublicKeyRead(BaseModel):
    key_id: str
    algorithm: str
    public_key_pem: str
    retired: list[RetiredKeyRead] = Field(
        default_factory=list, description="Keys that signed earlier checkpoints, oldest first, each until it retired"
    )


@router.get("/checkpoint", response_model=CheckpointRead)
def checkpoint(session: SessionDep) -> CheckpointRead:
    """The newest signed checkpoint: anyone can later prove the log was not truncated before it."""
    point = latest_checkpoint(session)
    if point is None:
        raise NotFoundError("no checkpoint has been published yet")
    return CheckpointRead.of(point)


@router.get("/checkpoints", response_model=CheckpointHistory)
def checkpoints(
    session: SessionDep,
    # Ids are PostgreSQL integers: a larger one is no id at all, refused as such rather than a 500.
    after: Annotated[int, Query(ge=0, le=2**31 - 1, description="Only checkpoints stored after this id")] = 0,
) -> CheckpointHistory:
    """Every signed checkpoint in the order it was signed, a page at a time: fetch it and keep it."""
    rows = session.scalars(
        select(AuditCheckpoint).where(AuditCheckpoint.id > after).order_by(AuditCheckpoint.id).limit(PAGE + 1)
    ).all()
    page = rows[:PAGE]
    return CheckpointHistory(
        checkpoints=[CheckpointRead.of(row) for row in page], next_after=page[-1].id if len(rows) > PAGE else None
    )


@router.get("/public-key", response_model=PublicKeyRead)
def public_key(signer: SignerDep, settings: SettingsDep) -> PublicKeyRead:
    """The Ed25519 key that signs checkpoints, and the retired ones that signed earlier checkpoints."""
    retired = [RetiredKeyRead(**r.to_json()) for r in read_retired(settings)]
    return PublicKeyRead(key_id=signer.key_id, algorithm="Ed25519", public_key_pem=signer.public_pem(), retired=retired)
