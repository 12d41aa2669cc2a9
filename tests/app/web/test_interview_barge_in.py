"""Barge-in in a real browser: the person starts to answer while the question still plays; the voice stops,
the page listens, and the answer is stored whole, its first words included (the recording that ran while
the question played goes on as the answer). Heard by the real Whisper model."""

from __future__ import annotations

import numpy as np
import pytest

from tests.app.web.conftest import create_invitation, microphone_wav, piper_speech, words
from tests.app.web.interview_browser import (
    PROBE,
    QuestionVoice,
    answers,
    check_screen,
    chunk_seqs,
    consent,
    probe,
    tone_wav,
    wait_until,
)
from tests.support.interview_pages import token_from

pytestmark = pytest.mark.slow

SPOKEN = "When I was a child we lived by the river, and every summer my brother and I built rafts from old doors."
# The microphone is silent this long (the question has begun playing by then), speaks once, then is silent.
SILENT_BEFORE_S = 15.0
QUESTION_S = 60.0  # far longer than the wait for the person to speak: only a barge-in ends it early


def late_answer_wav(path, text: str, rate: int = 16_000):
    """``text`` spoken after ``SILENT_BEFORE_S`` of silence, then 5 s of silence, as 16-bit PCM WAV."""
    audio = np.concatenate([np.zeros(round(SILENT_BEFORE_S * rate)), piper_speech(text), np.zeros(5 * rate)])
    return microphone_wav(path, audio, rate)


def test_speech_during_the_question_stops_the_voice_and_the_answer_is_kept_whole(
    serve, chromium, fresh_database, tmp_path
):
    microphone = late_answer_wav(tmp_path / "late-answer.wav", SPOKEN)
    server = serve(transcriber="embedded")
    context = chromium(microphone)
    context.add_init_script(PROBE)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    speech = QuestionVoice(long_s=QUESTION_S)
    page.route("**/v1/interviews/current/speech*", speech)
    consent(page, f"{server.url}/interview#invite={create_invitation(fresh_database)}")
    page.wait_for_function("document.getElementById('level').style.width !== ''", timeout=15_000)

    # By keyboard: the barge-in choice is a checkbox reached with Tab and toggled with Space, on by default.
    screens = check_screen(page, tmp_path, "interview-mic-check-barge-in")
    box = page.locator("#barge-in")
    assert box.is_checked()
    for _ in range(10):
        if page.evaluate("() => document.activeElement && document.activeElement.id") == "barge-in":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.id") == "barge-in", "the barge-in choice is not reachable by Tab"
    page.keyboard.press("Space")
    assert not box.is_checked()
    page.keyboard.press("Space")
    assert box.is_checked()
    page.locator("#mic-ok").focus()
    page.keyboard.press("Enter")

    wait_until(page, lambda: probe(page)["voices"] == 1, 30, "the question to play")
    wait_until(page, lambda: bool(page.evaluate("() => bargeIns.length")), 30, "the answer to stop the question")
    barged = page.evaluate("() => bargeIns[0]")
    speech.long_s = 0.0  # the next question is short
    assert barged["during"] == "speaking" and barged["playing"], barged
    assert barged["stopped"] is not None, barged
    assert probe(page)["voices"] == 0, "the question went on playing after the person began to speak"
    stopped_ms = barged["stopped"] - barged["onset"]
    print(f"barge-in: heard as speech {barged['heard'] - barged['onset']:.0f} ms after its onset, "
          f"the voice stopped {stopped_ms:.0f} ms after the onset")  # fmt: skip
    # 200 ms of speech make a barge-in (BARGE_IN.speechMs, so a cough does not), heard on a 20 ms tick: the voice
    # stops within 0.3 s of the person's first sound, by the page's own clock.
    assert stopped_ms <= 300, barged
    page.wait_for_function("document.body.dataset.state === 'listening'", timeout=10_000)
    screens += check_screen(page, tmp_path, "interview-listening-after-barge-in")
    # "I'm done" is on the first screen at both widths, and keyboard focus reaches it.
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 800})
        done = page.locator("#done-speaking").bounding_box()
        assert done and done["y"] + done["height"] <= 800, f"I'm done is below the fold at {width} px"
    page.set_viewport_size({"width": 1280, "height": 800})

    with server.client(token_from(page)) as client:
        wait_until(page, lambda: bool(answers(client)), 120, "the answer to be saved")
        saved = answers(client)
    assert len(saved) == 1, saved
    expected, heard = words(SPOKEN), words(saved[0])
    # Whole: its first words, said before the voice stopped, are there, and nearly all the rest.
    assert heard[:3] == expected[:3], f"the answer's first words were lost: {saved[0]!r}"
    found = [w for w in expected if w in set(heard)]
    assert len(found) >= 0.8 * len(expected), f"heard {saved[0]!r} for {SPOKEN!r}"
    seen = probe(page)
    assert seen["maxVoices"] <= 1 and seen["maxRecorders"] <= 1, seen
    assert "speaking" in seen["states"] and "listening" in seen["states"], seen["states"]
    seqs = chunk_seqs(fresh_database, 2)
    assert seqs == list(range(len(seqs))) and seqs, seqs  # one recording, nothing spliced in
    assert not screens, "\n".join(screens)
    assert not problems


GOES_ON = "We floated them down to the old mill and back, and nobody at home ever knew."
# Between the two: long enough to end the turn after the first question, which leaves time for a story (a
# finished thought or a voice that sounds finished waits 1.8 s there; a pause of a second is not the end), and
# the person goes on a second after the end, while "Thank you." plays (made 3 s long here): the reply to the
# first answer is back by then, and words said after it came were once neither heard nor recorded.
PAUSE_S = 2.8
THANKS_S = 3.0


def story_wav(path, rate: int = 16_000):
    """A person who finishes a sentence, pauses, and goes on: SPOKEN, the pause, GOES_ON, after
    8 s of silence (the page reaches the first question) and before 8 s more (the second answer ends)."""
    audio = np.concatenate([np.zeros(8 * rate), piper_speech(SPOKEN), np.zeros(round(PAUSE_S * rate)),
                            piper_speech(GOES_ON), np.zeros(8 * rate)])  # fmt: skip
    return microphone_wav(path, audio, rate)


def test_a_person_who_goes_on_after_the_turn_ended_is_heard_and_kept(serve, chromium, fresh_database, tmp_path):
    """The turn ends in the pause after a finished sentence; the person goes on while Robin says "Thank you."
    and thinks: the acknowledgement stops, and what they say is the next
    answer, its first words kept, the next question shown but not spoken over them. Nothing is lost."""
    server = serve(transcriber="embedded")
    context = chromium(story_wav(tmp_path / "story.wav"))
    context.add_init_script(PROBE)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    speech = QuestionVoice()
    page.route("**/v1/interviews/current/speech*", speech)
    thanks = tone_wav(THANKS_S)
    page.route("**/v1/interviews/current/speech/acknowledgement",
               lambda route, _request: route.fulfill(status=200, content_type="audio/wav", body=thanks))  # fmt: skip
    consent(page, f"{server.url}/interview#invite={create_invitation(fresh_database)}")
    page.wait_for_function("document.getElementById('level').style.width !== ''", timeout=15_000)
    page.locator("#mic-ok").click()

    try:
        wait_until(page, lambda: bool(page.evaluate("() => bargeIns.length")), 60, "the person to go on after the turn")
    except AssertionError as exc:  # say where the turn ended: inside the pause, after it, or not at all
        with server.client(token_from(page)) as client:
            saved = answers(client)
        raise AssertionError(f"{exc}; the page went through {probe(page)['states']}; saved {saved}") from None
    barged = page.evaluate("() => bargeIns[0]")
    assert barged["during"] in ("sending", "thinking"), barged  # after the end of the turn, before the question
    assert barged["stopped"] is not None, barged
    page.wait_for_function("document.body.dataset.state === 'listening'", timeout=60_000)
    screens = check_screen(page, tmp_path, "interview-listening-after-going-on")
    with server.client(token_from(page)) as client:
        wait_until(page, lambda: len(answers(client)) >= 2, 120, "both answers to be saved")
        saved = answers(client)
    first, then = words(saved[0]), words(saved[1])
    assert set(words(SPOKEN)[-3:]) <= set(first), f"the first answer lost its end: {saved[0]!r}"
    expected = words(GOES_ON)
    # Its start is there: two words before "them down to" (Whisper tiny has heard "We floated" as "I voted").
    assert then[2:5] == expected[2:5], f"the words said after the turn ended lost their start: {saved[1]!r}"
    found = [w for w in expected if w in set(then)]
    assert len(found) >= 0.8 * len(expected), f"heard {saved[1]!r} for {GOES_ON!r}"
    assert not (set(expected) - set(words(SPOKEN))) & set(first), f"the second answer spliced into the first: {saved}"
    seen = probe(page)
    assert seen["maxVoices"] <= 1 and seen["maxRecorders"] <= 1, seen
    # After the first answer Robin thought, then listened at once: the next question was not spoken over them.
    states = seen["states"]
    thought = states.index("thinking")
    assert states[thought + 1] == "listening", states
    assert not screens, "\n".join(screens)
    assert not problems
