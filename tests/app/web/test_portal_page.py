"""The participant's portal in a real browser: sign in with the access code, see a team's use of one's
agent with its receipt, download one's transcript, and withdraw with one confirmation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.app.web.interview_browser import check_screen
from tests.support.factories import CANARY
from tests.support.portal import OPERATOR_PURPOSE, PURPOSE, TITLE, participant_whose_agent_was_used

pytestmark = pytest.mark.slow


@pytest.fixture
def browser(chromium) -> Callable[[], object]:
    """A function that opens a fresh headless Chromium (no microphone, no network beyond loopback)."""
    return chromium


def test_sign_in_see_uses_download_and_withdraw(serve, browser, fresh_database, tmp_path):
    from playwright.sync_api import expect

    server = serve()
    code, used_seq = participant_whose_agent_was_used(fresh_database, server.keys())
    page = browser().new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{server.url}/portal")
    problems: list[str] = check_screen(page, tmp_path, "portal-signin")

    # A wrong code is refused in plain words.
    page.get_by_label("Access code").fill("not-a-real-code")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#message")).to_contain_text("not recognised")
    expect(page.locator("#signin-step")).to_be_visible()

    page.get_by_label("Access code").fill(code)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#portal-step")).to_be_visible()
    expect(page.locator("#agent-status")).to_contain_text("Active")
    assert page.locator("#pseudonym").text_content().strip()
    # The code is kept for the tab only: not in the URL, not in localStorage.
    assert code not in page.url
    assert page.evaluate("() => Object.values(localStorage)") == []
    assert code in page.evaluate("() => Object.values(sessionStorage)")

    # The team's use, with its project, purpose, what was asked, the result and the receipt.
    use = page.locator(f"#uses-body .use[data-seq='{used_seq}']")
    expect(use).to_contain_text(TITLE)
    expect(use).to_contain_text(PURPOSE)
    expect(use).to_contain_text("cappun")
    expect(use).to_contain_text("Released")
    expect(use).to_contain_text(f"Entry {used_seq}")
    with server.client(code) as client:
        receipts = {u["receipt"]["seq"]: u["receipt"] for u in client.get("/v1/participant/audit").json()}
    expect(use.locator(".receipt code")).to_have_text(receipts[used_seq]["hash"])
    expect(page.get_by_text("/v1/audit/checkpoint").first).to_be_visible()
    # The operator's own use is listed too, with the purpose the operator gave.
    operator_use = page.locator("#uses-body .use[data-action='operator.answer']")
    expect(operator_use).to_contain_text("The bank's operator asked your agent")
    expect(operator_use).to_contain_text(f"Purpose: {OPERATOR_PURPOSE}")
    # Only uses by others are listed one by one; the participant's own 22 interview steps are one line,
    # in plain words, that opens into the list.
    experiment_use = page.locator("#uses-body .use[data-action='experiment.answer']")
    expect(experiment_use).to_contain_text("Your agent took part in a published experiment")
    expect(experiment_use).to_contain_text("Counted only in the experiment's totals")
    expect(experiment_use).to_contain_text("Experiment: schilke; Version shown: low_power; Not told it was a study")
    assert page.locator("#uses-body .use").count() == 3
    own = page.locator("#own-summary")
    expect(own).to_contain_text("your interview (22 steps)")
    assert page.locator("#own").get_attribute("open") is None
    assert "interview.audio_turn" not in page.locator("body").inner_text()
    # Download and withdraw come before the list, within the first screen at both widths.
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 800})
        for name in ("Download my transcript", "Withdraw"):
            box = page.get_by_role("button", name=name, exact=True).bounding_box()
            assert box and box["y"] + box["height"] <= 800, f"{name} below the fold at {width} px"
    page.set_viewport_size({"width": 1280, "height": 800})
    problems += check_screen(page, tmp_path, "portal-uses")

    # The transcript, saved as a text file.
    with page.expect_download() as downloading:
        page.get_by_role("button", name="Download my transcript").click()
    download = downloading.value
    assert download.suggested_filename.endswith(".txt")
    saved = Path(download.path()).read_text(encoding="utf-8")
    assert CANARY in saved and "In part 0 I talk about the farm" in saved

    # Withdrawal: one button, then one confirmation.
    page.get_by_role("button", name="Withdraw", exact=True).click()
    problems += check_screen(page, tmp_path, "portal-withdraw-confirm")
    page.get_by_role("button", name="Yes, withdraw me").click()
    expect(page.locator("#withdrawn-notice")).to_be_visible()
    expect(page.locator("#agent-status")).to_have_text("Withdrawn")
    expect(page.locator("#withdraw-section")).to_be_hidden()
    with server.client(code) as client:
        me = client.get("/v1/participant/me").json()
    assert me["agent_status"] == "withdrawn" and me["consent"] == "withdrawn"
    problems += check_screen(page, tmp_path, "portal-withdrawn")

    assert all(url.startswith(server.url) or url.startswith("blob:") for url in requests), requests
    assert not problems, "\n".join(problems)
    assert not errors
