"""The interview page's states in a real browser: pause, reload, typing and speech never give two
voices or two recorders, and an answer recorded again replaces the old audio instead of splicing."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session

from agentbank.db.models import AudioChunk
from tests.app.web.conftest import create_invitation, synthesize_voice
from tests.app.web.interview_browser import (
    PROBE,
    QuestionVoice,
    answers,
    check_screen,
    chunk_seqs,
    consent,
    probe,
    screenshot,
    wait_until,
)
from tests.support.interview_pages import token_from

pytestmark = pytest.mark.slow

SPOKEN = "When I was a child we lived by the river, and every summer my brother and I built rafts from old doors."


@pytest.fixture
def browser(chromium, tmp_path):
    """Chromium (a fresh profile per launch) whose microphone keeps repeating a spoken answer."""
    voice = synthesize_voice(tmp_path / "answer.wav", SPOKEN)

    def launch(*, microphone: bool = True):
        context = chromium(voice.path, loop=True, microphone=microphone)
        context.add_init_script(PROBE)
        return context

    return launch


def open_interview(serve, browser, fresh_database, *, speech: QuestionVoice, microphone: bool = True):
    server = serve()
    page = browser(microphone=microphone).new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    calls: list[tuple[str, str, int]] = []
    page.on("response", lambda r: calls.append((r.request.method, r.url.split("/", 3)[-1], r.status)))
    page.route("**/v1/interviews/current/speech*", speech)
    consent(page, f"{server.url}/interview#invite={create_invitation(fresh_database)}")
    return server, page, problems, calls


def chunk_conflicts(calls) -> list:
    return [c for c in calls if c[0] == "PUT" and "/chunks/" in c[1] and c[2] == 409]


def test_pause_during_a_question_then_resume(serve, browser, fresh_database, tmp_path):
    speech = QuestionVoice(long_s=8.0)
    server, page, problems, calls = open_interview(serve, browser, fresh_database, speech=speech)
    page.wait_for_function("document.getElementById('level').style.width !== ''", timeout=15_000)
    page.locator("#barge-in").uncheck()  # the looped microphone speaks all along: the question plays on
    page.locator("#mic-ok").click()
    wait_until(page, lambda: probe(page)["voices"] == 1, 20, "the question to play")
    page.locator("#pause").click()
    page.wait_for_timeout(1500)
    assert probe(page)["voices"] == 0, "the question went on playing after Pause"
    assert probe(page)["recorders"] == 0, "a recorder runs while the interview is paused"
    screens = check_screen(page, tmp_path, "interview-paused")
    speech.long_s = 0.0
    page.locator("#resume").click()
    # Listening: the recording light and "I'm done" are on the first screen at both widths.
    page.wait_for_function("document.body.dataset.state === 'listening'", timeout=30_000)
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 800})
        box = page.locator("#done-speaking").bounding_box()
        assert box and box["y"] + box["height"] <= 800, f"I'm done is below the fold at {width} px"
    screens += check_screen(page, tmp_path, "interview-listening")
    with server.client(token_from(page)) as client:
        wait_until(page, lambda: bool(answers(client)), 90, f"the answer to be saved ({calls[-5:]})")
        saved = answers(client)
    seen = probe(page)
    assert seen["maxVoices"] <= 1 and seen["maxRecorders"] <= 1, seen
    assert not chunk_conflicts(calls), chunk_conflicts(calls)
    # One clean recording: one answer, its chunks numbered from 0 without a gap. The looped microphone says
    # the answer again and again, so on a slow machine the turn may hold several spans cut at pauses, each of
    # which the fake transcriber hears as its one sentence.
    assert len(saved) == 1 and saved[0].startswith("This is a test answer.")
    assert not saved[0].replace("This is a test answer.", "").strip(), saved
    seqs = chunk_seqs(fresh_database, 2)
    assert seqs == list(range(len(seqs))) and seqs, seqs
    assert not screens, "\n".join(screens)
    assert not problems


def test_reload_mid_answer_records_the_answer_again(serve, browser, fresh_database, tmp_path):
    server, page, problems, calls = open_interview(serve, browser, fresh_database, speech=QuestionVoice())
    page.wait_for_function("document.getElementById('level').style.width !== ''", timeout=15_000)
    page.locator("#mic-ok").click()
    acked = lambda: [c for c in calls if c[0] == "PUT" and "/chunks/" in c[1] and c[2] == 200]  # noqa: E731
    wait_until(page, lambda: len(acked()) >= 2, 30, "two chunks of the answer to be stored")
    page.reload()
    before = len(calls)
    page.wait_for_function("document.getElementById('level').style.width !== ''", timeout=15_000)
    screens = check_screen(page, tmp_path, "interview-welcome-back")
    assert not screens, "\n".join(screens)
    page.locator("#mic-ok").click()
    with server.client(token_from(page)) as client:
        wait_until(page, lambda: bool(answers(client)), 90, f"the answer to be saved ({calls[-5:]})")
    assert not chunk_conflicts(calls), chunk_conflicts(calls)
    after = {c[1].split("/chunks/")[1].split("?")[0] for c in calls[before:] if c[0] == "PUT" and c[2] == 200}
    engine = create_engine(fresh_database)
    try:
        with Session(engine) as session:
            stored = session.scalar(select(func.count()).select_from(AudioChunk).where(AudioChunk.turn == 2))
    finally:
        engine.dispose()
    assert stored == len(after), f"{stored} chunks stored for the answer, {len(after)} recorded after the reload"
    assert probe(page)["maxRecorders"] <= 1
    assert not problems


def test_typing_while_a_question_plays(serve, browser, fresh_database, tmp_path):
    speech = QuestionVoice(long_s=8.0)
    server, page, problems, calls = open_interview(serve, browser, fresh_database, speech=speech)
    page.locator("#type-instead").click()
    wait_until(page, lambda: probe(page)["voices"] == 1, 20, "the question to play")
    page.locator("#answer").fill("We moved to the city when I was twelve.")
    page.locator("#send").click()
    wait_until(page, lambda: page.locator("#answer").input_value() == "", 30, "the sent answer to leave the box")
    with server.client(token_from(page)) as client:
        wait_until(page, lambda: bool(answers(client)), 30, "the answer to be saved")
        assert answers(client) == ["We moved to the city when I was twelve."]
    page.wait_for_timeout(1000)
    seen = probe(page)
    assert seen["maxVoices"] <= 1, f"two voices at once: {seen}"
    assert "sending" in seen["states"] or "thinking" in seen["states"], seen["states"]
    screenshot(page, tmp_path, "interview-after-typing-1280")
    assert not problems


def test_a_blocked_microphone_gets_help_and_no_recording_screen(serve, browser, fresh_database, tmp_path):
    server, page, problems, _ = open_interview(serve, browser, fresh_database, speech=QuestionVoice(), microphone=False)
    # The server recorded its own address, which `agentbank interview invite` puts in its links.
    assert (server.data_dir / "server-url").read_text().strip() == server.url
    help_box = page.locator("#mic-help")
    help_box.wait_for(state="visible", timeout=15_000)
    assert "Allow" in help_box.inner_text() and "Chrome" in help_box.inner_text()
    assert page.locator("#mic-ok").is_hidden(), "a path on to a recording screen without a microphone"
    screens = check_screen(page, tmp_path, "interview-mic-blocked")
    assert not screens, "\n".join(screens)
    page.locator("#type-instead").click()
    page.locator("#answer").wait_for(state="visible", timeout=15_000)
    assert probe(page)["maxRecorders"] == 0
    assert not problems


def test_the_person_can_answer_within_seconds_of_consenting(serve, browser, fresh_database, tmp_path):
    """The opening is long; its first sentence plays at once (the real voice), and "Skip ahead" lets the
    person answer straight away."""
    server = serve(speaker="embedded")
    page = browser().new_page()
    code = create_invitation(fresh_database)
    consent(page, f"{server.url}/interview#invite={code}")
    consented = time.monotonic()
    page.wait_for_function("document.getElementById('level').style.width !== ''", timeout=15_000)
    page.locator("#barge-in").uncheck()  # the looped microphone speaks all along: here the person skips
    page.locator("#mic-ok").click()
    wait_until(page, lambda: probe(page)["voices"] == 1, 20, "the opening's first sentence to play")
    first_words = time.monotonic() - consented
    page.locator("#skip").click()
    page.wait_for_function("document.body.dataset.state === 'listening'", timeout=10_000)
    can_answer = time.monotonic() - consented
    print(f"consent to first words {first_words:.1f} s, to answering {can_answer:.1f} s")
    wait_until(page, lambda: probe(page)["recorders"] == 1, 10, "the recording to start")
    assert probe(page)["voices"] == 0
    assert can_answer < 20, f"{can_answer:.1f} s from consent to answering"
