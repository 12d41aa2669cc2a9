"""The audit log's public face: its signed checkpoints, newest or all of them, the key that signs them,
and Merkle proofs against them.

A witness or a participant fetches ``/v1/audit/checkpoints`` now and then and keeps what it gets;
``agentbank audit verify --witness FILE`` later checks the log against that copy, which nobody able to
rewrite the bank's database can change. An inclusion proof shows one event is in a signed tree head
with log2(n) hashes; a consistency proof, that one head extends another. Proofs carry hashes only:
whoever asks must bring the event (a participant's page has it: the use as it shows it, and its receipt;
``agentbank.audit.entries``), so they tell nothing about anyone's events.
"""

from __future__ import annotations

import base64
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query
from sqlalchemy import select

from agentbank.audit import tree
from agentbank.audit.checkpoints import SignedCheckpoint, latest_checkpoint
from agentbank.audit.heads import with_cosignatures
from agentbank.audit.trust import TrustedKeys, read_retired
from agentbank.core.errors import NotFoundError
from agentbank.db.models import AuditCheckpoint, AuditEvent
from app.api.audit.schemas import (
    CheckpointHistory,
    CheckpointRead,
    ConsistencyProofRead,
    InclusionProofRead,
    PublicKeyRead,
    RetiredKeyRead,
)
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
    return CheckpointRead.of(with_cosignatures(session, [point])[0])


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
        checkpoints=[CheckpointRead.of(point) for point in with_cosignatures(session, signed)],
        next_after=page[-1].id if len(rows) > PAGE else None,
    )


@router.get("/public-key", response_model=PublicKeyRead)
def public_key(signer: SignerDep, settings: SettingsDep) -> PublicKeyRead:
    """The Ed25519 key that signs checkpoints, and the retired ones that signed earlier checkpoints."""
    retired = [RetiredKeyRead(**r.to_json()) for r in read_retired(settings)]
    return PublicKeyRead(
        key_id=signer.key_id, algorithm="Ed25519", public_key_pem=signer.public_pem(), retired=retired,
        note_key=signer.verifier.vkey(), witnesses=[w.key for w in settings.audit_witnesses],
    )  # fmt: skip


# Sizes and seqs are PostgreSQL bigints: larger ones are no event at all, refused as such rather than a 500.
Size = Annotated[int, Query(ge=1, le=2**62, description="The tree size (a signed head's); unset: the newest head's")]


def _b64(hashes: list[bytes]) -> list[str]:
    return [base64.b64encode(h).decode() for h in hashes]


def _newest_size(session: SessionDep, keys: TrustedKeys) -> int:
    point = latest_checkpoint(session, keys.verifies)
    if point is None:
        raise NotFoundError("no checkpoint has been published yet")
    return point.seq


@router.get("/proof/{seq}", response_model=InclusionProofRead)
def inclusion_proof(
    seq: Annotated[int, Path(ge=1, le=2**62)], session: SessionDep, keys: TrustedDep, tree_size: Size | None = None
) -> InclusionProofRead:
    """The inclusion proof of event ``seq`` in the tree of ``tree_size`` events: hash the event's leaf as its
    ``leaf_version`` says, fold in these hashes as RFC 6962 says, and the root must be the signed head's. The
    version is the bank's word, and safe to take: a leaf hashed another way than the tree's cannot lead to
    the signed root."""
    size = tree_size or _newest_size(session, keys)
    hashes = tree.inclusion(session, seq, size)
    version = session.scalar(select(AuditEvent.leaf_version).where(AuditEvent.seq == seq))
    return InclusionProofRead(
        seq=seq, leaf_index=seq - 1, tree_size=size, leaf_version=version or 1, hashes=_b64(hashes)
    )


@router.get("/consistency", response_model=ConsistencyProofRead)
def consistency_proof(
    session: SessionDep,
    first: Annotated[int, Query(ge=0, le=2**62, description="The smaller tree size")],
    second: Annotated[int, Query(ge=1, le=2**62, description="The larger tree size")],
) -> ConsistencyProofRead:
    """The proof that the tree of ``first`` events is a prefix of the tree of ``second`` (RFC 6962): what
    a witness checks before it cosigns, and anyone holding two heads can check too."""
    return ConsistencyProofRead(first=first, second=second, hashes=_b64(tree.consistency(session, first, second)))
