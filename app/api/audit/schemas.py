"""The audit log's published bodies: signed checkpoints and the keys that sign them."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from agentbank.audit.checkpoints import SignedCheckpoint
from agentbank.db.models import AuditCheckpoint


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
