"""The retest's invitation goes out by itself: the worker's periodic run, with a clock before and after the
retest's due date, mails exactly those due who left a contact, audits each sending to the participant with
the invitation marked sent, sends nobody twice within the reminder interval, tries a failed sending again
at the next run, and never writes to a withdrawn participant."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import sessionmaker

from agentbank.core.settings import Settings
from agentbank.db.models import AuditEvent, InterviewInvitation, InterviewSession, Study
from agentbank.participants import withdrawal
from agentbank.runtime.bank import Bank
from agentbank.runtime.worker import RETEST_CRON, Worker
from agentbank.studies import contacts
from agentbank.studies.mail import Outbox
from agentbank.studies.stages import Stage
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from tests.support.factories import SECRET, keyring
from tests.support.interviews import interviewer_model
from tests.support.study_factories import COORDINATOR, new_study, participant_of, populate, study_script

PUBLIC = "https://bank.example.org"
DAY = 24 * 3600


@pytest.fixture
def bank(engine, database_url, tmp_path):
    """A bank on the test database whose sessions commit as savepoints of the test's transaction."""
    settings = Settings(secret_key=SECRET, data_dir=tmp_path, database_url=database_url, public_url=PUBLIC)
    with engine.connect() as conn:
        outer = conn.begin()
        sessions = sessionmaker(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        yield Bank(settings, engine, sessions, keyring())
        outer.rollback()


@pytest.fixture
def cohort(bank):
    """Four who completed their survey (retest due in 13 days): two left an address, one left none, one left
    one and withdrew; and one who took the retest already, with an address. Their addresses by role."""
    services = Services(keys=bank.keys, chat=interviewer_model(0), transcriber=FakeTranscriber())
    script = study_script()
    with bank.sessions() as db:
        study = new_study(db, script)
        at = populate(db, services, study, script, {Stage.SURVEY_DONE: 4, Stage.RETEST_DONE: 1})
        ada, bea, cy, dee = (participant_of(db, n) for n in at[Stage.SURVEY_DONE])
        done = participant_of(db, at[Stage.RETEST_DONE][0])
        people = {"ada": ada, "bea": bea, "dee": dee, "done": done}
        for name, participant_id in people.items():
            contacts.leave_contact(db, bank.keys, participant_id, f"{name}@example.org", COORDINATOR)
        withdrawal.withdraw(db, bank.keys, dee, COORDINATOR, ledger=None)
        db.commit()
    return {**people, "cy": cy}


def invitation_of(db, participant_id) -> InterviewInvitation:
    return db.scalars(
        select(InterviewInvitation)
        .join(InterviewSession, InterviewSession.id == InterviewInvitation.session_id)
        .where(InterviewSession.participant_id == participant_id)
    ).one()


def sent_to(outbox: Outbox) -> list[str]:
    return [message.to for message in outbox.sent]


def test_the_retest_invitation_goes_out_at_the_due_date_to_those_who_left_a_contact(bank, cohort):
    outbox = Outbox()
    worker = Worker(bank, mail=outbox)
    now = int(datetime.now(UTC).timestamp())

    worker.invite_to_retest(now)  # before the due date: nobody
    assert outbox.sent == []

    outbox.refusing.add("bea@example.org")  # her mail server refuses, this once
    after = now + 14 * DAY
    worker.invite_to_retest(after)
    assert sent_to(outbox) == ["ada@example.org"]
    assert f"{PUBLIC}/portal" in outbox.sent[0].body and "follow-up survey" in outbox.sent[0].subject

    at = datetime.fromtimestamp(after, UTC)
    with bank.sessions() as db:
        events = db.scalars(select(AuditEvent).where(AuditEvent.action == "study.reminder")).all()
        assert [e.participant_id for e in events] == [cohort["ada"]]  # audited to the participant
        assert events[0].actor_kind == "system" and "@" not in str(events[0].details)
        ada, bea, dee = (invitation_of(db, cohort[name]) for name in ("ada", "bea", "dee"))
        assert ada.reminded_at == at and ada.reminder_failed_at is None
        # Not marked sent, so not skipped: the failure shows in the coordinator's list, and is tried again.
        assert bea.reminded_at is None and bea.reminder_failed_at == at
        due = {d.invitation: d for d in contacts.due(db, db.get_one(Study, bea.study_id), at)}
        assert due[bea.id].reminder_failed_at == at and due[ada.id].reminder_failed_at is None
        # The withdrawn participant is not due, and their address went with their withdrawal.
        assert dee.id not in due and dee.contact_encrypted is None

    outbox.refusing.clear()
    worker.invite_to_retest(after + 3600)  # the next run: the failed one now, and nobody twice
    assert sent_to(outbox) == ["ada@example.org", "bea@example.org"]

    worker.invite_to_retest(after + 2 * DAY)  # still within the reminder interval
    assert len(outbox.sent) == 2

    worker.invite_to_retest(after + 4 * DAY)  # past it, the two who have not taken the retest are reminded again
    assert sorted(sent_to(outbox)[2:]) == ["ada@example.org", "bea@example.org"]
    # Never the one without an address, the withdrawn one, or the one whose retest is done.
    assert {"cy@example.org", "dee@example.org", "done@example.org"}.isdisjoint(sent_to(outbox))


def test_a_worker_without_a_mail_server_or_a_public_address_sends_nothing(bank, cohort):
    later = int((datetime.now(UTC) + timedelta(days=14)).timestamp())
    assert Worker(bank).mail is None  # no AGENTBANK_SMTP_HOST: nothing is sent
    Worker(bank).invite_to_retest(later)
    outbox = Outbox()
    bank.settings.public_url = None  # no address for the portal's link: nothing is sent either
    Worker(bank, mail=outbox).invite_to_retest(later)
    assert outbox.sent == []


def test_every_worker_runs_the_retest_invitations_on_a_schedule(bank):
    worker = Worker(bank, mail=Outbox())
    periodic = {key[1]: task for key, task in worker.app.periodic_registry.periodic_tasks.items()}
    assert periodic["retest-invitations"].cron == RETEST_CRON
