"""The interview page in a real browser: a participant consents, speaks into the microphone, and the
server saves what they said, transcribed by the real Whisper model."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.app.web.conftest import LEADING_SILENCE_S, Voice, create_invitation, synthesize_voice, words
from tests.support.interview_pages import short_wav, token_from

pytestmark = pytest.mark.slow

SPOKEN = "My grandmother taught me to bake bread every Sunday morning in her small kitchen."
TURN_SAVED_S = 120.0
ROUND_TRIP_S = 0.5


def test_spoken_answer_reaches_the_saved_transcript(serve, chromium, fresh_database, tmp_path):
    said, _ = answer_by_voice(serve, chromium, fresh_database, tmp_path)
    expected, heard = words(SPOKEN), set(words(" ".join(said)))
    found = [w for w in expected if w in heard]
    assert len(found) >= 0.8 * len(expected), f"heard {said!r} for {SPOKEN!r}"


def test_a_slow_round_trip_sends_the_frames_together_and_loses_none(serve, chromium, fresh_database, tmp_path):
    """Each upload answered half a second late (a busy machine, a slow network): the page sends one request
    per round trip with every frame recorded meanwhile, so the server hears the person as they speak instead
    of later and later (it sent one request per 100-ms frame, one after another, and fell seconds behind)."""
    uploads: list[float] = []

    def late(route, request) -> None:
        uploads.append(time.monotonic())
        time.sleep(ROUND_TRIP_S)
        route.continue_()

    said, voice = answer_by_voice(serve, chromium, fresh_database, tmp_path, late)
    expected, heard = words(SPOKEN), set(words(" ".join(said)))
    assert len([w for w in expected if w in heard]) >= 0.8 * len(expected), f"heard {said!r} for {SPOKEN!r}"
    # The recording lasts the silence before the answer, the answer and the silence that ends it (3 s at most):
    # one frame a request would be ten requests a second of it; one request a round trip is two at most.
    recorded_s = LEADING_SILENCE_S + voice.speech_s + 4.0
    assert len(uploads) <= recorded_s / ROUND_TRIP_S + 2, f"{len(uploads)} uploads for {voice.speech_s:.1f} s of speech"


def answer_by_voice(serve, chromium, fresh_database, tmp_path, on_chunk=None) -> tuple[list[str], Voice]:
    """A participant consents and speaks ``SPOKEN`` (``on_chunk``: a route for the uploads of its chunks); what
    the transcript saved, and the voice."""
    voice = synthesize_voice(tmp_path / "answer.wav", SPOKEN)
    server = serve(transcriber="embedded")
    code = create_invitation(fresh_database)

    browser = chromium(voice.path)
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    calls: list[str] = []
    page.on("response", lambda r: calls.append(f"{r.request.method} {r.url.split('/', 3)[-1]} {r.status}"))
    spoken_questions: list[int] = []

    def question_speech(route, request) -> None:
        # The real endpoint answers; its audio is cut short so that the question does not play while
        # the fake microphone (which starts at the microphone check) already speaks the answer.
        try:
            real = httpx.get(request.url, headers={"Authorization": request.headers["authorization"]}, timeout=60)
            spoken_questions.append((real.status_code, real.content[:4]))
        finally:
            # One part: the page asks for the turn sentence by sentence, and this is all of it.
            route.fulfill(status=200, content_type="audio/wav", body=short_wav(), headers={"X-Speech-Parts": "1"})

    page.route("**/v1/interviews/current/speech*", question_speech)
    if on_chunk is not None:
        page.route("**/v1/interviews/current/turns/*/chunks/*", on_chunk)
    page.goto(f"{server.url}/interview#invite={code}")

    # Consent: the button opens only once every box is ticked.
    begin = page.locator("#begin")
    assert begin.is_disabled()
    for box in page.get_by_role("checkbox").all():
        box.check()
    begin.click()

    # The microphone check: the page holds the microphone once its level meter is drawn.
    page.wait_for_function("document.getElementById('level').style.width !== ''", timeout=15_000)
    page.locator("#mic-ok").click()
    token = token_from(page)

    deadline = time.monotonic() + TURN_SAVED_S
    said: list[str] = []
    with server.client(token) as client:
        while time.monotonic() < deadline:
            response = client.get("/v1/interviews/current/transcript")
            assert response.status_code == 200, response.text
            said = [t["text"] for t in response.json() if t["speaker"] == "participant"]
            if said:
                break
            page.wait_for_timeout(500)  # not time.sleep: the page's routes are served only while playwright runs
    message = page.locator("#message").text_content()
    assert said, f"nothing saved in {TURN_SAVED_S:.0f} s; page: {message!r} {problems} {calls}\n{server.log()}"
    assert spoken_questions and all(q == (200, b"RIFF") for q in spoken_questions), spoken_questions
    assert not problems
    return said, voice
