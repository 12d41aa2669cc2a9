"""The audit log's published bodies: signed checkpoints, the keys that sign them, and Merkle proofs."""

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
    note: str | None = Field(
        default=None,
        description="The same head as a C2SP checkpoint (origin, tree size, base64 Merkle root) signed as a note "
        "by the bank's key, with the cosignatures of the witnesses that cosigned it; null before the tree existed",
    )

    @classmethod
    def of(cls, point: AuditCheckpoint | SignedCheckpoint) -> CheckpointRead:
        """The published form of a checkpoint (hashes and signature in hex)."""
        return cls(
            seq=point.seq, head_hash=point.head_hash.hex(), signed_at=point.signed_at, key_id=point.key_id,
            signature=point.signature.hex(), note=point.note,
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
    note_key: str = Field(description="The same key as a C2SP verifier key (name+id+base64): it verifies tree heads")
    witnesses: list[str] = Field(
        default_factory=list, description="The verifier keys of the witnesses the bank asks to cosign each tree head"
    )
    retired: list[RetiredKeyRead] = Field(
        default_factory=list, description="Keys that signed earlier checkpoints, oldest first, each until it retired"
    )


class InclusionProofRead(BaseModel):
    seq: int = Field(description="The event; its leaf is at index seq - 1")
    leaf_index: int
    tree_size: int
    leaf_version: int = Field(
        description="What the leaf hashes: 2, SHA-256(0x00 || SHA-256(the event as the participant's portal shows "
        "it, with its chain hash, in canonical JSON)); 1 (events written before leaves had versions), "
        "SHA-256(0x00 || its chain hash)"
    )
    hashes: list[str] = Field(description="The audit path, leaf side first, each hash in base64 (RFC 6962 PATH)")


class ConsistencyProofRead(BaseModel):
    first: int
    second: int
    hashes: list[str] = Field(description="The proof that the first tree is a prefix of the second, in base64")
