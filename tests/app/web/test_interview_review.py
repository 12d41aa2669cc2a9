"""The end of the interview in a real browser: the review grouped by module, removing a passage with
undo and confirmation, the closing words, and an access code that survives a reload until saved.
Every screen is checked with axe-core at 1280 and 375 px, and screenshots are kept."""

from __future__ import annotations

import re

import pytest

from tests.app.web.conftest import create_invitation, synthesize_voice
from tests.app.web.interview_browser import PROBE, QuestionVoice, check_screen, consent
from tests.support.interview_pages import token_from, when_free

pytestmark = pytest.mark.slow

CODE = re.compile(r"([2-9A-Z]{4}-){6}[2-9A-Z]{4}")


@pytest.fixture
def page(chromium, tmp_path):
    voice = synthesize_voice(tmp_path / "answer.wav", "I grew up in a small town near the sea.")
    context = chromium(voice.path, loop=True)
    context.add_init_script(PROBE)
    return context.new_page()


def focused(page) -> str:
    return page.evaluate("() => document.activeElement && document.activeElement.id")


def test_review_finish_and_the_access_code(serve, page, fresh_database, tmp_path):
    server = serve()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.route("**/v1/interviews/current/speech*", QuestionVoice())
    url = f"{server.url}/interview#invite={create_invitation(fresh_database)}"
    page.goto(url)
    problems = check_screen(page, tmp_path, "interview-consent")
    consent(page, url)
    page.wait_for_function("document.getElementById('level').style.width !== ''", timeout=15_000)
    assert focused(page) == "mic-title"
    problems += check_screen(page, tmp_path, "interview-mic")
    page.locator("#type-instead").click()
    page.wait_for_function("document.body.dataset.state === 'listening'", timeout=20_000)
    problems += check_screen(page, tmp_path, "interview-talk")

    # The rest of the short version, answered through the API; one answer names a lighthouse.
    with server.client(token_from(page)) as client:
        for n in range(80):
            text = "We lived next to the old lighthouse." if n == 1 else f"Answer number {n}."
            response = when_free(lambda text=text: client.post("/v1/interviews/current/answer", json={"text": text}))
            assert response.status_code == 200, response.text
            if response.json()["status"] == "review":
                break
        assert response.json()["status"] == "review"
    page.reload()
    page.locator("#type-instead").click()
    page.locator("#review-step").wait_for(state="visible", timeout=20_000)
    assert focused(page) == "review-title"
    assert "last question" in page.locator("#review-closing").inner_text()
    groups = page.locator("#modules details.module")
    assert groups.count() >= 10 and page.locator("#modules details[open]").count() == 0
    problems += check_screen(page, tmp_path, "interview-review")

    page.locator("#search").fill("lighthouse")
    assert page.locator("#modules details[open]").count() == 1
    assert "1 passages" in page.locator("#message").inner_text()
    remove = page.locator("details[open] .turn.participant:not([hidden]) button.remove")
    assert remove.inner_text() == "Remove this passage"
    remove.click()
    assert remove.inner_text().startswith("Undo")
    remove.click()
    assert remove.inner_text() == "Remove this passage"
    remove.click()
    page.locator("#search").fill("")
    page.locator("#confirm").click()
    assert "removing 1 passage" in page.locator("#confirm-text").inner_text()
    assert focused(page) == "confirm-yes"
    page.locator("#confirm-yes").click()

    page.locator("#done-step").wait_for(state="visible", timeout=20_000)
    assert focused(page) == "done-title"
    code = page.locator("#access-code").inner_text()
    assert CODE.fullmatch(code), code
    assert "last question" in page.locator("#done-closing").inner_text()
    page.locator("#copy").click()
    assert page.evaluate("() => navigator.clipboard.readText()") == code
    assert page.locator("#portal-link").get_attribute("href") == "/portal"
    problems += check_screen(page, tmp_path, "interview-done")
    page.reload()
    assert page.locator("#access-code").inner_text() == code, "the code is gone after a reload"

    # The code, typed loosely, opens the portal; the removed passage is gone from the transcript.
    with server.client(code.lower().replace("-", " ").replace(" ", "")) as portal:
        assert portal.get("/v1/participant/me").status_code == 401  # the API takes the code as printed
    with server.client(code) as portal:
        transcript = portal.get("/v1/participant/transcript").text
    assert "lighthouse" not in transcript and "[redacted]" in transcript
    page.locator("#saved").check()
    page.reload()
    assert page.locator("#code-box").is_hidden()
    assert not problems, "\n".join(problems)
    assert not errors
