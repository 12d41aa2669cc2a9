"""The retest's invitation, sent by itself: a worker's periodic run mails every study's participants whose
retest has opened (the survey's second wave, due ``retest_after`` after the first) and who left a contact.

Each person is sent in a transaction of their own, which marks the invitation sent and audits the sending to
the participant (``contacts.remind``), so one person's refusing mail server neither undoes the others'
sendings nor stops them. A failed sending marks nothing sent: it is recorded (``reminder_failed_at``, which
a coordinator's list of who is due shows), logged, and tried again at the next run. A withdrawn participant
is never due, and their contact is gone with their key.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import log as audit
from agentbank.core.errors import ProviderError
from agentbank.db import transaction
from agentbank.db.models import InterviewInvitation, Study
from agentbank.keys.crypto import KeyRing
from agentbank.studies.contacts import due, remind, remindable
from agentbank.studies.mail import Sender

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sending:
    """What one run did: how many were sent, and how many failed (to be tried again at the next run)."""

    sent: int
    failed: int


def portal_link(public_url: str) -> str:
    """The participant's portal, where they sign in with their access code to take the retest."""
    return f"{public_url.rstrip('/')}/portal"


def send_due_invitations(
    sessions: sessionmaker[Session], keys: KeyRing, sender: Sender, link: str, now: datetime,
    actor: audit.Actor = audit.SYSTEM,
) -> Sending:  # fmt: skip
    """Invite to the retest, across every study, each person due at ``now`` who left a contact and was not
    sent it within ``contacts.REMIND_EVERY``; ``link`` is the portal's address. One transaction per person."""
    with transaction(sessions) as session:
        studies = session.scalars(
            select(Study).where(
                Study.id.in_(
                    select(InterviewInvitation.study_id).where(InterviewInvitation.contact_encrypted.is_not(None))
                )
            )
        ).all()
        waiting = [(s.id, p.invitation) for s in studies for p in due(session, s, now) if remindable(p, now)]
    sent = failed = 0
    for study_id, invitation in waiting:
        try:
            with transaction(sessions) as session:
                done = remind(session, keys, session.get_one(Study, study_id), invitation, sender, link, now, actor)
        except ProviderError as exc:  # rolled back: nothing marked sent, so the next run tries again
            failed += 1
            _failed(sessions, study_id, invitation, now, exc)
            continue
        sent += done
    if sent or failed:
        log.info("retest invitations: %d sent, %d failed (tried again at the next run)", sent, failed)
    return Sending(sent, failed)


def _failed(
    sessions: sessionmaker[Session], study_id: uuid.UUID, invitation: int, now: datetime, exc: ProviderError
) -> None:
    """Record that the sending failed, so the coordinator's list of who is due shows it (not the address)."""
    log.warning("the retest invitation of invitation %d of study %s was not sent: %s", invitation, study_id, exc)
    with transaction(sessions) as session:
        session.execute(
            update(InterviewInvitation).where(InterviewInvitation.id == invitation).values(reminder_failed_at=now)
        )
