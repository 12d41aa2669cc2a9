"""Contact details a participant chooses to leave for the retest reminder, and the reminders themselves.

The contact is sealed with the participant's data key, so it is destroyed with it when they withdraw;
nobody reads it but the sender, in memory, at the moment of sending. A coordinator learns who is due by
invitation number and whether a contact was left, never the contact. Each sending is audited without the
address, in the transaction that marks it sent. The mail leaves inside that transaction: if it then fails,
the person may be reminded twice, never silently skipped. ``retest`` sends the reminders by itself.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import InvalidRequestError, NotFoundError
from agentbank.core.statuses import BatteryWaveStatus, ConsentStatus
from agentbank.db.models import BatteryWave, InterviewInvitation, InterviewSession, Participant, Study
from agentbank.keys.crypto import KeyRing
from agentbank.studies.completion import study_of
from agentbank.studies.mail import Sender

EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,190}\.[^@\s]{2,}$")
# A reminder is sent again at most this often.
REMIND_EVERY = timedelta(days=3)


@dataclass(frozen=True)
class Due:
    """A participant whose retest is open and not taken, named by their invitation's number."""

    invitation: int
    participant_id: uuid.UUID
    due_at: datetime
    reminded_at: datetime | None
    has_contact: bool
    reminder_failed_at: datetime | None = None  # the last attempt's failure, since the last sending


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


def due(session: Session, study: Study, now: datetime, invitation: int | None = None) -> list[Due]:
    """The study's participants whose retest is open and not yet taken, oldest due first (or only the one of
    ``invitation``, if they are)."""
    query = (
        select(
            InterviewInvitation.id,
            InterviewSession.participant_id,
            BatteryWave.due_at,
            InterviewInvitation.reminded_at,
            InterviewInvitation.contact_encrypted.is_not(None),
            InterviewInvitation.reminder_failed_at,
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
    )
    if invitation is not None:
        query = query.where(InterviewInvitation.id == invitation)
    return [Due(*row) for row in session.execute(query).all()]


def read_due(session: Session, study: Study, now: datetime, actor: audit.Actor) -> list[Due]:
    """Who is due, as a coordinator reads it: audited (who looked, how many were due)."""
    found = due(session, study, now)
    audit.record(session, actor, "study.due", Tier.ADMIN, details={"study": str(study.id), "rows": len(found)})
    return found


def remindable(person: Due, now: datetime) -> bool:
    """Whether a due person is to be reminded now: they left a contact and were not reminded lately."""
    return person.has_contact and (person.reminded_at is None or now - person.reminded_at >= REMIND_EVERY)


def remind(
    session: Session, keys: KeyRing, study: Study, invitation: int, sender: Sender, link: str, now: datetime,
    actor: audit.Actor,
) -> bool:  # fmt: skip
    """Send the retest's reminder to the person of ``invitation`` if they are still due and remindable, read
    again under the invitation's lock (so two senders never both send); marked sent and audited to the
    participant in ``session``. Whether it was sent; the sender's ``ProviderError`` goes up, nothing marked."""
    row = session.get_one(InterviewInvitation, invitation, with_for_update=True, populate_existing=True)
    found = due(session, study, now, invitation)
    if not found or not remindable(found[0], now) or row.contact_encrypted is None:
        return False
    participant = session.get_one(Participant, found[0].participant_id)
    if participant.wrapped_key is None:
        return False
    address = keys.cipher(participant.id, participant.wrapped_key).open(row.contact_encrypted)
    sender.send(address, f"{study.name}: your follow-up survey is open", _body(link))
    row.reminded_at, row.reminder_failed_at = now, None
    session.flush()
    audit.record(session, actor, "study.reminder", Tier.PARTICIPANT, participant_id=participant.id,
                 details={"study": str(study.id), "invitation": row.id})  # fmt: skip
    return True


def send_reminders(
    session: Session, keys: KeyRing, study: Study, sender: Sender, link: str, now: datetime, actor: audit.Actor
) -> int:
    """Send the retest reminder to every due participant who left a contact and was not reminded lately, all
    in ``session``; how many were sent. A refusing server stops it with ``ProviderError``."""
    people = [person.invitation for person in due(session, study, now) if remindable(person, now)]
    return sum(remind(session, keys, study, invitation, sender, link, now, actor) for invitation in people)


def _body(link: str) -> str:
    return (
        "Two weeks ago you gave an interview for our study. The follow-up survey is now open: the same\n"
        "questions as last time, about fifteen minutes.\n\n"
        f"Sign in with your access code at {link}\n\n"
        "You left this address for this reminder only; you can remove it, or withdraw, in the portal.\n"
    )


def forget(session: Session, participant_id: uuid.UUID) -> None:
    """On withdrawal: the contact, the panel's id and outcome and every count about the person's interview go,
    so a study keeps only that someone withdrew."""
    sessions = select(InterviewSession.id).where(InterviewSession.participant_id == participant_id)
    session.execute(
        update(InterviewInvitation)
        .where(InterviewInvitation.session_id.in_(sessions))
        .values(
            contact_encrypted=None,
            panel_ref_encrypted=None,
            reminded_at=None,
            reminder_failed_at=None,
            panel_outcome=None,
            panel_outcome_at=None,
        )
    )
    session.execute(
        update(InterviewSession)
        .where(InterviewSession.participant_id == participant_id)
        .values(answers_given=0, answer_words=0, follow_ups_asked=0, audio_flags=0, seconds_used={})
    )
