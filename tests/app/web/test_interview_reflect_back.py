"""Reflect-back in a real browser, on the embedded model: at the end of a module Robin tells the person what
it heard and asks whether it got it right; a confirmation is thanked, a correction acknowledged, both kept in
the transcript, and the next question follows. Typed, as a person without a microphone answers; the screen
checked with axe-core at 1280 and 375 px, and its screenshots kept."""

from __future__ import annotations

import pytest

from interviewer.deciding import reflecting
from tests.app.web.conftest import create_invitation
from tests.app.web.interview_browser import QuestionVoice, answers, check_screen, consent, wait_until
from tests.support.interview_pages import token_from

pytestmark = pytest.mark.slow

ANSWERS = (
    "I grew up in a fishing town in Maine, the youngest of four.",
    "My mother ran the bakery on the harbour and my father fished for lobster.",
    "We spent the summers on the water and the winters shovelling snow.",
    "I left for college in Boston when I was eighteen.",
)
CORRECTION = "No, not quite: it was my aunt who ran the bakery, not my mother."


def subtitle(page) -> str:
    return page.locator("#subtitle").inner_text().strip()


def say(page, text: str) -> str:
    """Type ``text`` as the answer and send it; the interviewer's next words once they are shown."""
    before = subtitle(page)
    if not page.locator("#answer").is_visible():
        page.locator("#text-box summary").click()
    page.locator("#answer").fill(text)
    page.locator("#send").click()
    wait_until(page, lambda: subtitle(page) != before and page.evaluate("document.body.dataset.state") == "listening",
               120, "the interviewer's next words")  # fmt: skip
    return subtitle(page)


def until_told_back(page, start: int) -> tuple[str, int]:
    """Answer until Robin tells the module back (at most as many answers as a module takes follow-ups)."""
    for n in range(start, start + 6):
        said = say(page, ANSWERS[n % len(ANSWERS)] + ("" if n < len(ANSWERS) else f" ({n})"))
        if said.endswith(reflecting.CHECK):
            return said, n + 1
    raise AssertionError(f"no summary after six answers; last words {said!r}")


def test_the_person_confirms_one_summary_and_corrects_the_next(serve, chromium, fresh_database, tmp_path):
    server = serve(chat_provider="embedded")
    page = chromium(None, microphone=False).new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.route("**/v1/interviews/current/speech*", QuestionVoice())
    consent(page, f"{server.url}/interview#invite={create_invitation(fresh_database)}")
    page.locator("#type-instead").click()
    page.wait_for_function("document.body.dataset.state === 'listening'", timeout=30_000)

    told, n = until_told_back(page, 0)
    assert len(told.split()) >= reflecting.MIN_WORDS + 5, told
    screens = check_screen(page, tmp_path, "interview-reflect-back")
    confirmed = say(page, "Yes, that's right.")
    assert confirmed.startswith(reflecting.CONFIRMED) and not confirmed.endswith(reflecting.CHECK), confirmed

    _, n = until_told_back(page, n)
    corrected = say(page, CORRECTION)
    assert corrected.startswith(reflecting.CORRECTED), corrected

    with server.client(token_from(page)) as client:
        saved = answers(client)
        turns = client.get("/v1/interviews/current/transcript").json()
    assert "Yes, that's right." in saved and CORRECTION in saved
    said = [t["text"] for t in turns]
    summary = said.index(told)
    assert said[summary + 1] == "Yes, that's right." and said[summary + 2] == confirmed
    assert said[-2] == CORRECTION and said[-1] == corrected and said[-3].endswith(reflecting.CHECK)
    assert not screens, "\n".join(screens)
    assert not problems
