"""Retest reminders: the contact a participant left is sealed with their key, the reminder goes through a
real SMTP exchange (a local server), each sending is audited without the address, and a withdrawal
destroys the contact with the key."""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select, update

from agentbank.core.errors import InvalidRequestError, ProviderError
from agentbank.db.models import AuditEvent, BatteryWave, InterviewInvitation
from agentbank.participants import withdrawal
from agentbank.studies import contacts
from agentbank.studies.mail import SmtpSender
from agentbank.studies.stages import Stage
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from tests.support.factories import keyring
from tests.support.interviews import interviewer_model
from tests.support.study_factories import COORDINATOR, new_study, populate, study_script

ADDRESS = "ada.lovelace@example.org"


class Inbox:
    """What the local SMTP server received: (recipients, message text)."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], str]] = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((list(envelope.rcpt_tos), envelope.content.decode()))
        return "250 OK"


@pytest.fixture
def smtp():
    inbox = Inbox()
    with socket.socket() as probe:  # a free port: the controller checks its server by connecting to it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield SmtpSender("127.0.0.1", port, "studies@bank.example"), inbox
    controller.stop()


@pytest.fixture
def services():
    return Services(keys=keyring(), chat=interviewer_model(0), transcriber=FakeTranscriber())


def test_the_reminder_reaches_those_due_who_left_a_contact_and_the_log_keeps_no_address(db, services, smtp):
    sender, inbox = smtp
    script = study_script()
    study = new_study(db, script)
    at = populate(db, services, study, script, {Stage.RETEST_DUE: 3, Stage.SURVEY_DONE: 1})
    due = contacts.due(db, study, datetime.now(UTC))
    assert [d.invitation for d in due] == at[Stage.RETEST_DUE]
    left, silent, leaver = due
    contacts.leave_contact(db, services.keys, left.participant_id, ADDRESS, COORDINATOR)
    contacts.leave_contact(db, services.keys, leaver.participant_id, "leaver@example.org", COORDINATOR)
    withdrawal.withdraw(db, services.keys, leaver.participant_id, COORDINATOR, ledger=None)
    row = db.get(InterviewInvitation, left.invitation)
    assert row is not None and ADDRESS.encode() not in row.contact_encrypted

    now = datetime.now(UTC)
    sent = contacts.send_reminders(db, services.keys, study, sender, "https://bank.example/portal", now, COORDINATOR)

    assert sent == 1 and [to for to, _ in inbox.messages] == [[ADDRESS]]
    assert "https://bank.example/portal" in inbox.messages[0][1]
    events = db.scalars(select(AuditEvent).where(AuditEvent.action == "study.reminder")).all()
    assert len(events) == 1 and events[0].participant_id == left.participant_id
    assert all("@" not in str(e.details) for e in db.scalars(select(AuditEvent)).all())
    # Reminded once: not again within days, and the withdrawn person's contact is gone with their key.
    assert contacts.send_reminders(db, services.keys, study, sender, "x", now + timedelta(hours=1), COORDINATOR) == 0
    assert db.get(InterviewInvitation, leaver.invitation).contact_encrypted is None
    assert silent.has_contact is False


def test_a_retest_taken_or_not_yet_due_is_not_reminded(db, services):
    script = study_script()
    study = new_study(db, script)
    at = populate(db, services, study, script, {Stage.RETEST_DONE: 1, Stage.AGENT_BUILT: 1})
    assert contacts.due(db, study, datetime.now(UTC)) == []
    db.execute(update(BatteryWave).where(BatteryWave.wave == 2).values(due_at=datetime.now(UTC) - timedelta(days=1)))
    assert [d.invitation for d in contacts.due(db, study, datetime.now(UTC))] == at[Stage.AGENT_BUILT]


def test_a_bad_address_is_refused_and_a_refusing_server_is_one_clear_error(db, services):
    script = study_script()
    study = new_study(db, script)
    populate(db, services, study, script, {Stage.RETEST_DUE: 1})
    (person,) = contacts.due(db, study, datetime.now(UTC))
    with pytest.raises(InvalidRequestError):
        contacts.leave_contact(db, services.keys, person.participant_id, "not an address", COORDINATOR)
    contacts.leave_contact(db, services.keys, person.participant_id, ADDRESS, COORDINATOR)
    closed = SmtpSender("127.0.0.1", 9, "studies@bank.example", timeout_s=2)  # nothing listens on discard
    with pytest.raises(ProviderError) as refused:
        contacts.send_reminders(db, services.keys, study, closed, "x", datetime.now(UTC), COORDINATOR)
    assert ADDRESS not in str(refused.value)
