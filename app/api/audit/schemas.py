"""The audit log's published bodies: signed checkpoints and the key that signs them."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from agentbank.checkpoints import SignedCheckpoint
from agentbank.models import AuditCheckpoint


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


class PublicKeyRead(BaseModel):
    key_id: str
    algorithm: str
    public_key_pem: str
