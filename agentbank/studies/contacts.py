"""Contact details a participant chooses to leave for the retest reminder, and the reminders themselves.

The contact is sealed with the participant's data key, so it is destroyed with it when they withdraw;
nobody reads it but the sender, in memory, at the moment of sending. A coordinator learns who is due by
invitation number and whether a contact was left, never the contact. Each sending is audited without the
address. The mail leaves inside the caller's transaction: if that transaction then fails, the person may
be reminded twice, never silently skipped.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import InvalidRequestError, NotFoundError
from agentbank.core.statuses import BatteryWaveStatus, ConsentStatus
from agentbank.db.models import BatteryWave, InterviewInvitation, InterviewSession, Participant, Study
from agentbank.keys.crypto import KeyRing
from agentbank.studies.completion import study_of

EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,190}\.[^@\s]{2,}$")
# A reminder is sent again at most this often.
REMIND_EVERY = timedelta(days=3)


class Sender(Protocol):
    """Something that delivers one message to one address (SMTP in ``mail``; a list in tests)."""

    def send(self, to: str, subject: str, body: str) -> None: ...


@dataclass(frozen=True)
class Due:
    """A participant whose retest is open and not taken, named by their invitation's number."""

    invitation: int
    participant_id: uuid.UUID
    due_at: datetime
    reminded_at: datetime | None
    has_contact: bool


def leave_contact(
    session: Session, keys: KeyRing, participant_id: uuid.UUID, email: str | None, actor: audit.Actor
) -> None:
    """Keep (or, with None, remove) the address the participant wants the retest reminder sent to."""
    found = study_of(session, participant_id)
    if found is None:
        raise NotFoundError("reminders are sent only to participants of a study")
    _, invitation = found
    participant = session.get_one(Participant, participant_id)
    if email is None:
        invitation.contact_encrypted = None
    else:
        address = email.strip()
        if not EMAIL.match(address):
            raise InvalidRequestError("this does not look like an email address")
        invitation.contact_encrypted = keys.cipher(participant.id, participant.wrapped_key).seal(address)
    session.flush()
    audit.record(session, actor, "study.contact", Tier.PARTICIPANT, participant_id=participant_id,
                 details={"kept": email is not None})  # fmt: skip


def due(session: Session, study: Study, now: datetime) -> list[Due]:
    """The study's participants whose retest is open and not yet taken, oldest due first."""
    rows = session.execute(
        select(
            InterviewInvitation.id,
            InterviewSession.participant_id,
            BatteryWave.due_at,
            InterviewInvitation.reminded_at,
            InterviewInvitation.contact_encrypted.is_not(None),
        )
        .join(InterviewSession, InterviewSession.id == InterviewInvitation.session_id)
        .join(Participant, Participant.id == InterviewSession.participant_id)
        .join(BatteryWave, (BatteryWave.participant_id == Participant.id) & (BatteryWave.wave == 2))
        .where(
            InterviewInvitation.study_id == study.id,
            Participant.consent != ConsentStatus.WITHDRAWN,
            BatteryWave.status != BatteryWaveStatus.COMPLETE,
            BatteryWave.due_at <= now,
        )
        .order_by(BatteryWave.due_at, InterviewInvitation.id)
    ).all()
    return [Due(*row) for row in rows]


def read_due(session: Session, study: Study, now: datetime, actor: audit.Actor) -> list[Due]:
    """Who is due, as a coordinator reads it: audited (who looked, how many were due)."""
    found = due(session, study, now)
    audit.record(session, actor, "study.due", Tier.ADMIN, details={"study": str(study.id), "rows": len(found)})
    return found


def send_reminders(
    session: Session, keys: KeyRing, study: Study, sender: Sender, link: str, now: datetime, actor: audit.Actor
) -> int:
    """Send the retest reminder to every due participant who left a contact and was not reminded lately;
    how many were sent."""
    sent = 0
    for person in due(session, study, now):
        if not person.has_contact or (person.reminded_at is not None and now - person.reminded_at < REMIND_EVERY):
            continue
        invitation = session.get_one(InterviewInvitation, person.invitation, with_for_update=True)
        participant = session.get_one(Participant, person.participant_id)
        if invitation.contact_encrypted is None or participant.wrapped_key is None:
            continue
        address = keys.cipher(participant.id, participant.wrapped_key).open(invitation.contact_encrypted)
        sender.send(address, f"{study.name}: your follow-up survey is open", _body(link))
        invitation.reminded_at = now
        audit.record(session, actor, "study.reminder", Tier.PARTICIPANT, participant_id=participant.id,
                     details={"study": str(study.id), "invitation": invitation.id})  # fmt: skip
        sent += 1
    session.flush()
    return sent


def _body(link: str) -> str:
    return (
        "Two weeks ago you gave an interview for our study. The follow-up survey is now open: the same\n"
        "questions as last time, about fifteen minutes.\n\n"
        f"Sign in with your access code at {link}\n\n"
        "You left this address for this reminder only; you can remove it, or withdraw, in the portal.\n"
    )


def forget(session: Session, participant_id: uuid.UUID) -> None:
    """On withdrawal: the contact, the panel's id and every count about the person's interview go, so a
    study keeps only that someone withdrew."""
    sessions = select(InterviewSession.id).where(InterviewSession.participant_id == participant_id)
    session.execute(
        update(InterviewInvitation)
        .where(InterviewInvitation.session_id.in_(sessions))
        .values(contact_encrypted=None, panel_ref_encrypted=None, reminded_at=None)
    )
    session.execute(
        update(InterviewSession)
        .where(InterviewSession.participant_id == participant_id)
        .values(answers_given=0, answer_words=0, follow_ups_asked=0, audio_flags=0, seconds_used={})
    )
