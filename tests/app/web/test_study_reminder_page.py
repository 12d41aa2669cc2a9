"""A study's participant, after the first survey, may leave an address for the retest's reminder on the
survey's last page: kept sealed with their key, readable by no coordinator (a real browser, both widths,
the accessibility check)."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from agentbank.access.clients import issue_participant_token
from agentbank.db.models import InterviewInvitation, InterviewSession, Participant
from agentbank.studies.stages import Stage
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from tests.app.web.interview_browser import check_screen
from tests.support.interviews import interviewer_model
from tests.support.study_factories import new_study, populate, study_script

pytestmark = pytest.mark.slow  # a server process and a browser

ADDRESS = "rosalind.f@example.org"


def surveyed_participant(url: str, keys) -> tuple[str, int]:
    """A study's participant whose first survey is done and retest scheduled: (access code, invitation)."""
    engine = create_engine(url)
    services = Services(keys=keys, chat=interviewer_model(0), transcriber=FakeTranscriber())
    with Session(engine, expire_on_commit=False) as session:
        script = study_script()
        study = new_study(session, script, name="Reminder pilot", target=5)
        invitation = populate(session, services, study, script, {Stage.SURVEY_DONE: 1})[Stage.SURVEY_DONE][0]
        participant_id = session.scalars(
            select(InterviewSession.participant_id)
            .join(InterviewInvitation, InterviewInvitation.session_id == InterviewSession.id)
            .where(InterviewInvitation.id == invitation)
        ).one()
        code = issue_participant_token(session, session.get_one(Participant, participant_id), 3600)
        session.commit()
    engine.dispose()
    return code, invitation


def test_a_participant_leaves_an_address_for_the_retest_reminder(serve, chromium, fresh_database, tmp_path):
    from playwright.sync_api import expect

    server = serve()
    code, invitation = surveyed_participant(fresh_database, server.keys())
    page = chromium().new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{server.url}/survey")
    page.get_by_label("Access code").fill(code)
    page.get_by_role("button", name="Sign in").click()

    expect(page.locator("#end-step")).to_be_visible()
    expect(page.locator("#end-text")).to_contain_text("Your second survey opens on")
    expect(page.locator("#reminder")).to_be_visible()
    problems = check_screen(page, tmp_path, "survey-reminder")
    page.get_by_label("Email address").fill(ADDRESS)
    page.get_by_role("button", name="Remind me").click()
    expect(page.locator("#message")).to_contain_text("we will write to you once")

    engine = create_engine(fresh_database)
    with Session(engine) as session:
        row = session.get_one(InterviewInvitation, invitation)
        participant = session.get_one(Participant, session.get_one(InterviewSession, row.session_id).participant_id)
        assert row.contact_encrypted is not None and ADDRESS.encode() not in row.contact_encrypted
        assert server.keys().cipher(participant.id, participant.wrapped_key).open(row.contact_encrypted) == ADDRESS
    engine.dispose()
    assert not problems, "\n".join(problems)
    assert not errors
