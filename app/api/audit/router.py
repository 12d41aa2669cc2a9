"""The audit log's public face: the signed checkpoint of its head and the key that signs it."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter
from pydantic import BaseModel

from agentbank.audit import latest_checkpoint
from agentbank.errors import NotFoundError
from agentbank.models import AuditCheckpoint
from app.api.deps import SessionDep, SignerDep

router = APIRouter(prefix="/v1/audit", tags=["audit"])


class CheckpointRead(BaseModel):
    seq: int
    head_hash: str
    signed_at: datetime
    key_id: str
    signature: str

    @classmethod
    def of(cls, point: AuditCheckpoint) -> CheckpointRead:
        """The published form of a stored checkpoint (hashes and signature in hex)."""
        return cls(
            seq=point.seq, head_hash=point.head_hash.hex(), signed_at=point.signed_at, key_id=point.key_id,
            signature=point.signature.hex(),
        )  # fmt: skip


class PublicKeyRead(BaseModel):
    key_id: str
    algorithm: str
    public_key_pem: str


@router.get("/checkpoint", response_model=CheckpointRead)
def checkpoint(session: SessionDep) -> CheckpointRead:
    """The newest signed checkpoint: anyone can later prove the log was not truncated before it."""
    point = latest_checkpoint(session)
    if point is None:
        raise NotFoundError("no checkpoint has been published yet")
    return CheckpointRead.of(point)


@router.get("/public-key", response_model=PublicKeyRead)
def public_key(signer: SignerDep) -> PublicKeyRead:
    """The Ed25519 key that signs checkpoints."""
    return PublicKeyRead(key_id=signer.key_id, algorithm="Ed25519", public_key_pem=signer.public_pem())
