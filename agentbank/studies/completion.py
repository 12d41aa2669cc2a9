"""Where a panel's participant goes at the end: the study's completion URL for the interview, and separately
for the retest, carrying the completion code: the panel's one code as the panel gave it, or, in a study that
gives each participant their own (``CompletionCodes.PER_PARTICIPANT``), theirs in the place of ``{code}``.

A participant's own code is derived, never stored: an HMAC of the study, their invitation and the end,
under a key derived from their data key (``Cipher.digest``). It reads the same every time, differs from
everyone else's, and, like everything else of theirs, cannot be made again once they withdraw, so nothing
left in the bank ties their panel identity to their interview. The coordinator lists the codes of those who
reached each end (``codes``) for the panel's approval step: codes only, never by invitation number, which
matched with the panel's own list would tie each panel id to a row of the study's progress.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import ConflictError
from agentbank.core.statuses import BatteryWaveStatus, ConsentStatus, InterviewStatus
from agentbank.db.models import BatteryWave, InterviewInvitation, InterviewSession, Participant, Study
from agentbank.keys.crypto import Cipher, KeyRing


class Ending(StrEnum):
    INTERVIEW = "interview"
    RETEST = "retest"


class CompletionCodes(StrEnum):
    """Which completion code a study's URLs carry."""

    PANEL = "panel"  # the panel's one code, written in the URLs as the panel gave it
    PER_PARTICIPANT = "per_participant"  # each participant's own, in the place of CODE_FIELD


CODE_FIELD = "{code}"
# Crockford's base32 (no I, L, O or U to misread): ten characters, 50 bits, out of reach of guessing.
CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 10


@dataclass(frozen=True)
class Code:
    """A participant's own completion code for one end of the study, as the coordinator lists it."""

    ending: Ending
    code: str


def participant_code(cipher: Cipher, study_id: uuid.UUID, invitation: int, ending: Ending) -> str:
    """The participant's own code for ``ending`` of the study they were invited to by ``invitation``."""
    value = int(cipher.digest("study completion code", f"{study_id}:{invitation}:{ending.value}"), 16)
    chars = []
    for _ in range(CODE_LENGTH):
        value, digit = divmod(value, len(CODE_ALPHABET))
        chars.append(CODE_ALPHABET[digit])
    return "".join(chars)


def study_of(session: Session, participant_id: uuid.UUID) -> tuple[Study, InterviewInvitation] | None:
    """The study the participant was invited to and their invitation, or None (invited on their own)."""
    row = session.execute(
        select(Study, InterviewInvitation)
        .join(InterviewInvitation, InterviewInvitation.study_id == Study.id)
        .join(InterviewSession, InterviewSession.id == InterviewInvitation.session_id)
        .where(InterviewSession.participant_id == participant_id)
        .order_by(InterviewInvitation.id.desc())
        .limit(1)
    ).first()
    return (row[0], row[1]) if row is not None else None


def _url(study: Study, ending: Ending) -> str | None:
    return study.completion_url if ending == Ending.INTERVIEW else study.retest_completion_url


def completion_url(session: Session, keys: KeyRing, participant_id: uuid.UUID, ending: Ending) -> str | None:
    """The URL the panel takes the participant back at, once ``ending`` is reached, with the completion code
    in it; None without a panel."""
    found = study_of(session, participant_id)
    if found is None:
        return None
    study, invitation = found
    url = _url(study, ending)
    if url is None or study.completion_codes != CompletionCodes.PER_PARTICIPANT:
        return url
    participant = session.get_one(Participant, participant_id)
    cipher = keys.cipher(participant.id, participant.wrapped_key)
    return url.replace(CODE_FIELD, participant_code(cipher, study.id, invitation.id, ending))


def codes(session: Session, keys: KeyRing, study: Study, actor: audit.Actor) -> list[Code]:
    """The own codes of the study's participants who reached each end its URLs send back from (the interview's:
    the transcript confirmed; the retest's: completed), in the codes' order; audited (who read, how many).
    ConflictError for a study whose URLs carry the panel's one code."""
    if study.completion_codes != CompletionCodes.PER_PARTICIPANT:
        raise ConflictError("this study's URLs carry the panel's one completion code", hint="the panel holds it")
    rows = session.execute(
        select(InterviewInvitation.id, Participant.id, Participant.wrapped_key, BatteryWave.status)
        .join(InterviewSession, InterviewSession.id == InterviewInvitation.session_id)
        .join(Participant, Participant.id == InterviewSession.participant_id)
        .outerjoin(BatteryWave, (BatteryWave.participant_id == Participant.id) & (BatteryWave.wave == 2))
        .where(
            InterviewInvitation.study_id == study.id,
            InterviewSession.status == InterviewStatus.FINISHED,
            Participant.consent != ConsentStatus.WITHDRAWN,
            Participant.wrapped_key.is_not(None),
        )
    ).all()
    found: list[Code] = []
    for invitation, participant_id, wrapped, retest in rows:
        reached = [Ending.INTERVIEW, *([Ending.RETEST] if retest == BatteryWaveStatus.COMPLETE else [])]
        cipher = keys.cipher(participant_id, wrapped)
        found += [Code(e, participant_code(cipher, study.id, invitation, e)) for e in reached if _url(study, e)]
    found.sort(key=lambda c: (c.ending, c.code))
    audit.record(session, actor, "study.completion_codes", Tier.ADMIN,
                 details={"study": str(study.id), "rows": len(found)})  # fmt: skip
    return found
