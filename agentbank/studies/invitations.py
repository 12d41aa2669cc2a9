"""A study's invitations: issued in bulk, revoked while unused, redeemed once, or issued per visit of the
study's open link (the way panels send people: one link, their own id appended).

Only a code's hash is stored, so the codes exist once, in what ``issue`` returns (the CSV a coordinator
mails or uploads). Redeeming checks expiry and revocation; the interview itself begins in ``interviewer``.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import AgentBankError, ConflictError, InvalidRequestError
from agentbank.db.models import InterviewInvitation, Study
from agentbank.keys.crypto import Cipher

MAX_BATCH = 5000
MAX_PANEL_REF = 200


class InvitationError(AgentBankError):
    """The invitation code is unknown, was already used, was revoked or has expired."""

    code = "invalid_invitation"
    status_code = 403


@dataclass(frozen=True)
class Issued:
    """One invitation as handed out: its number (what the coordinator's views name) and its code."""

    id: int
    code: str


def code_hash(code: str) -> str:
    """The stored form of an invitation code (256 random bits, so a fast hash suffices)."""
    return hashlib.sha256(code.strip().encode()).hexdigest()


def new_code() -> str:
    """A fresh invitation code."""
    return secrets.token_urlsafe(24)


def issue(session: Session, study: Study, count: int, actor: audit.Actor, now: datetime) -> list[Issued]:
    """``count`` new invitations of the study, expiring with it; the codes are in the result only."""
    if not 1 <= count <= MAX_BATCH:
        raise InvalidRequestError(f"invite between 1 and {MAX_BATCH} people at a time")
    if study.expires_at <= now:
        raise ConflictError("the study has expired; create a new one or extend it")
    codes = [new_code() for _ in range(count)]
    rows = [InterviewInvitation(code_hash=code_hash(c), study_id=study.id, expires_at=study.expires_at) for c in codes]
    session.add_all(rows)
    session.flush()
    audit.record(session, actor, "study.invite", Tier.ADMIN, details={"study": str(study.id), "count": count})
    return [Issued(row.id, code) for row, code in zip(rows, codes, strict=True)]


def open_link(session: Session, study: Study, actor: audit.Actor) -> str:
    """A new open code for the study's one link (any earlier one stops working); each visit issues a code."""
    code = new_code()
    study.open_code_hash = code_hash(code)
    session.flush()
    audit.record(session, actor, "study.open_link", Tier.ADMIN, details={"study": str(study.id)})
    return code


def revoke_unused(
    session: Session, study: Study, actor: audit.Actor, now: datetime, ids: list[int] | None = None
) -> int:
    """Revoke the study's invitations nobody has used (all, or those numbered ``ids``); how many."""
    query = update(InterviewInvitation).where(
        InterviewInvitation.study_id == study.id,
        InterviewInvitation.used_at.is_(None),
        InterviewInvitation.revoked_at.is_(None),
    )
    if ids is not None:
        query = query.where(InterviewInvitation.id.in_(ids))
    revoked = session.execute(query.values(revoked_at=now).returning(InterviewInvitation.id)).scalars().all()
    if ids is None:
        study.open_code_hash = None  # no new visits either
    session.flush()
    audit.record(session, actor, "study.revoke", Tier.ADMIN, details={"study": str(study.id), "count": len(revoked)})
    return len(revoked)


def redeemable(session: Session, code: str, now: datetime) -> InterviewInvitation:
    """The unused invitation ``code`` names, locked; a study's open code issues one for this visit.

    Raises InvitationError when the code is unknown, used, revoked or expired, and ConflictError when the
    study behind an open code has as many participants as it set out to have.
    """
    hashed = code_hash(code)
    invitation = session.scalars(
        select(InterviewInvitation).where(InterviewInvitation.code_hash == hashed).with_for_update()
    ).first()
    if invitation is None:
        study = session.scalars(select(Study).where(Study.open_code_hash == hashed).with_for_update()).first()
        if study is not None:
            invitation = _visit(session, study, now)
    if invitation is None or invitation.used_at is not None or invitation.revoked_at is not None:
        raise InvitationError("this invitation code is unknown or was already used")
    if invitation.expires_at is not None and invitation.expires_at <= now:
        raise InvitationError("this invitation has expired")
    return invitation


def _visit(session: Session, study: Study, now: datetime) -> InterviewInvitation:
    """An invitation issued for one visit of the study's open link (the study row is locked by the caller)."""
    started = session.scalar(
        select(func.count()).where(InterviewInvitation.study_id == study.id, InterviewInvitation.used_at.is_not(None))
    )
    if (started or 0) >= study.target_size:
        raise ConflictError("this study has all the participants it needs; thank you for your interest")
    invitation = InterviewInvitation(code_hash=code_hash(new_code()), study_id=study.id, expires_at=study.expires_at)
    session.add(invitation)
    session.flush()
    return invitation


def seal_panel_ref(invitation: InterviewInvitation, cipher: Cipher, panel_ref: str | None) -> None:
    """Keep the panel's id for the person, sealed with their key; refused on an invitation without a panel."""
    if panel_ref is None:
        return
    ref = panel_ref.strip()
    if not ref or len(ref) > MAX_PANEL_REF or not ref.isprintable():
        raise InvalidRequestError("the panel's participant id is empty, too long or not printable")
    invitation.panel_ref_encrypted = cipher.seal(ref)
