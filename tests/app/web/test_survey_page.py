"""The participant's survey in a real browser: signed in from the portal, every page answered (some
questions declined), the tab reloaded half-way with nothing lost, finished with the retest's date shown;
later, on the retest's day, the second survey in a shuffled order."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from agentbank.access.clients import issue_participant_token
from tests.app.web.interview_browser import check_screen, screenshot
from tests.support.factories import build

pytestmark = pytest.mark.slow

DECLINED = ("gss:cappun", "games:trust_sender")


def participant_with_agent(database_url: str, keys) -> tuple[str, str]:
    """A consenting participant whose agent is built: (access code, participant id)."""
    engine = create_engine(database_url)
    try:
        with Session(engine) as session, session.begin():
            participant, *_ = build(session, keys=keys)
            return issue_participant_token(session, participant, 3600), str(participant.id)
    finally:
        engine.dispose()


def answer_page(page, declined=DECLINED) -> None:
    """Answer every question on the screen as a person would: age typed, the first option otherwise
    (or "Prefer not to say" for the declined ones), each saved as it is chosen."""
    from playwright.sync_api import expect

    for fieldset in page.locator("#questions fieldset").all():
        key = fieldset.get_attribute("data-key")
        number = fieldset.locator("input[type='number']")
        if key in declined:
            fieldset.get_by_label("Prefer not to say").check()
        elif number.count():
            number.fill("58")
            number.press("Tab")
        else:
            fieldset.get_by_role("radio").first.check()
        expect(fieldset.locator(".saved")).to_have_text("Saved")


def test_a_participant_takes_the_survey_then_the_retest(serve, chromium, fresh_database, tmp_path):
    from playwright.sync_api import expect

    server = serve()
    code, participant_id = participant_with_agent(fresh_database, server.keys())
    page = chromium().new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    # Signed in on the portal, the survey opens in the same tab without the code again.
    page.goto(f"{server.url}/portal")
    page.get_by_label("Access code").fill(code)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#portal-step")).to_be_visible()
    expect(page.locator("#survey-status")).to_contain_text("not answered yet")
    page.get_by_role("link", name="Answer your survey").click()
    expect(page.locator("#intro-step")).to_be_visible()
    problems = check_screen(page, tmp_path, "survey-intro")
    started = time.monotonic()
    page.get_by_role("button", name="Begin").click()

    # The first page: a question left open is named, and nothing moves on.
    expect(page.locator("#page-title")).to_have_text("About you")
    problems += check_screen(page, tmp_path, "survey-about")
    page.get_by_role("button", name="Next").click()
    expect(page.locator("#page-problem")).to_contain_text("Prefer not to say")
    assert page.locator("fieldset.missing").count() == page.locator("#questions fieldset").count()
    answer_page(page)
    total_pages = int(page.locator("#where").text_content().split(" of ")[1].split()[0])
    page.get_by_role("button", name="Next").click()

    for number in range(2, 8):
        expect(page.locator("#where")).to_contain_text(f"Page {number} of {total_pages}")
        answer_page(page)
        page.get_by_role("button", name="Next").click()
    # Half-way, one answer given on the next page, the tab reloads: the survey carries on at this page
    # with that answer still chosen.
    expect(page.locator("#where")).to_contain_text(f"Page 8 of {total_pages}")
    first = page.locator("#questions fieldset").first
    first.get_by_role("radio").nth(1).check()
    expect(first.locator(".saved")).to_have_text("Saved")
    answered_before = page.locator("#progress").get_attribute("value")
    page.reload()
    expect(page.locator("#where")).to_contain_text(f"Page 8 of {total_pages}")
    assert page.locator("#progress").get_attribute("value") == answered_before
    expect(page.locator("#questions fieldset").first.get_by_role("radio").nth(1)).to_be_checked()

    for number in range(8, total_pages + 1):
        expect(page.locator("#where")).to_contain_text(f"Page {number} of {total_pages}")
        if page.locator("#page-title").text_content() == "How you see yourself" and number == 18:
            problems += check_screen(page, tmp_path, "survey-big-five")
        answer_page(page)
        if number == total_pages:
            problems += check_screen(page, tmp_path, "survey-last-page")
            page.get_by_role("button", name="Finish").click()
        else:
            page.get_by_role("button", name="Next").click()
    expect(page.locator("#end-step")).to_be_visible()
    minutes = (time.monotonic() - started) / 60
    due = (datetime.now(UTC) + timedelta(days=14)).strftime("%Y")
    expect(page.locator("#end-text")).to_contain_text(due)
    problems += check_screen(page, tmp_path, "survey-thanks")
    print(f"survey wave 1 completed in the browser in {minutes:.1f} min ({total_pages} pages)")

    with server.client(code) as client:
        stored = client.get("/v1/participant/battery").json()
    assert stored["status"] == "scheduled" and stored["completed"]["1"]

    # The portal names the retest's date.
    page.goto(f"{server.url}/portal")
    expect(page.locator("#survey-status")).to_contain_text("second survey opens on")

    # Two weeks later (the clock moved by moving the due date back).
    engine = create_engine(fresh_database)
    with engine.begin() as conn:
        conn.execute(text("UPDATE battery_waves SET due_at = now() - interval '1 minute' WHERE wave = 2"))
    engine.dispose()
    page.reload()
    expect(page.locator("#survey-status")).to_contain_text("second survey is ready")
    page.get_by_role("link", name="Answer your survey").click()
    expect(page.locator("#intro-text")).to_contain_text("different order")
    page.get_by_role("button", name="Begin").click()
    expect(page.locator("#page-title")).to_have_text("Your views")
    answer_page(page)
    screenshot(page, tmp_path, "retest-first-page")
    with server.client(code) as client:
        retest = client.get("/v1/participant/battery").json()
    assert retest["wave"] == 2 and retest["answered"] == 5
    assert not problems, "\n".join(problems)
    assert not errors, errors
