"""Ten spoken turns in a real browser with the embedded models (Whisper and the interviewer's chat model):
each answer spoken into the fake microphone, its end detected by the server, the next question asked;
the wait from the end of each turn to the next question's audio is printed, never asserted (the
figures belong to benchmarks; here what must hold is that every turn ends and is saved)."""

from __future__ import annotations

import statistics
import time
import wave
from pathlib import Path

import numpy as np
import pytest

from tests.app.web.conftest import create_invitation
from tests.app.web.test_interview_page import short_wav, token_from

pytestmark = pytest.mark.slow

ANSWERS = (
    "I grew up in a small town in southern Ohio, the youngest of four children.",
    "My father worked at the paper mill, and my mother kept a large garden.",
    "We did not have much money, but there was always music on Saturday nights.",
    "At seventeen I left for the city and found work in a hospital laundry.",
    "I met my husband at a church picnic the summer after I turned twenty.",
    "We had two daughters, and both of them became teachers like my mother.",
    "The hardest year was when the plant closed and we nearly lost the house.",
    "I went back to school at forty and trained to be a nurse.",
    "These days I volunteer at the library and look after my grandson.",
    "Looking back, I think those years taught me to trust my neighbors.",
)
LEAD_S = 6.0  # consent, the microphone check and the opening before the first answer
GAP_S = 14.0  # after each answer: the end of the turn (1.2 to 3 s of silence), the decision, the next question
# After the first answer the embedded chat model makes its first decision, loading first: on a slow machine that
# took longer than a gap, and the whole second answer was spoken to a page still waiting for its question.
FIRST_GAP_S = 40.0


def microphone(path: Path) -> float:
    """Every answer spoken by Piper with silence between, as one 16-bit WAV; its length in seconds."""
    from interviewer.speech import PiperSpeaker, wav_samples

    speaker = PiperSpeaker(threads=2)
    try:
        spoken = [speaker.synthesize(text) for text in ANSWERS]
    finally:
        speaker.close()
    rate = spoken[0].sample_rate
    pieces = [np.zeros(round(LEAD_S * rate))]
    for n, speech in enumerate(spoken):
        pieces += [wav_samples(speech), np.zeros(round((FIRST_GAP_S if n == 0 else GAP_S) * rate))]
    audio = np.concatenate(pieces)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes())
    return len(audio) / rate


def test_ten_spoken_turns_each_end_and_are_saved(serve, chromium, fresh_database, tmp_path):
    voice = tmp_path / "answers.wav"
    length_s = microphone(voice)
    server = serve(chat_provider="embedded", transcriber="embedded", speaker="fake")
    code = create_invitation(fresh_database)
    page = chromium(voice).new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    began = time.monotonic()
    chunk_responses: list[tuple[float, object]] = []
    speech_requests: list[float] = []
    page.on("response", lambda r: chunk_responses.append((time.monotonic(), r)) if "/chunks/" in r.url else None)
    # Every start of the interviewer's voice (the "Thank you." said at the end of a turn, or a question),
    # stamped by the browser on the wall clock: the first one after an end of turn is when the person hears
    # the interviewer again.
    voices: list[float] = []
    wall_ends: list[float] = []
    wall_questions: list[float] = []
    page.on("response", lambda r: wall_ends.append(time.time()) if "/chunks/" in r.url and r.ok
            and r.json().get("end_of_turn") else None)  # fmt: skip
    page.expose_function("voiceStarted", lambda at_ms: voices.append(at_ms / 1000))
    page.add_init_script(
        "(() => { const play = HTMLMediaElement.prototype.play; HTMLMediaElement.prototype.play = function () {"
        " window.voiceStarted(performance.timeOrigin + performance.now()); return play.apply(this, arguments); };"
        " })();"
    )

    def question_speech(route, request) -> None:
        # The question is "spoken" at once (a short silence), so the microphone's timeline stays the test's.
        if "part=0" in request.url:
            speech_requests.append(time.monotonic())
            wall_questions.append(time.time())
        route.fulfill(status=200, content_type="audio/wav", body=short_wav(), headers={"X-Speech-Parts": "1"})

    page.route("**/v1/interviews/current/speech*", question_speech)
    page.goto(f"{server.url}/interview#invite={code}")
    for box in page.get_by_role("checkbox").all():
        box.check()
    page.locator("#begin").click()
    page.wait_for_function("document.getElementById('level').style.width !== ''", timeout=15_000)
    page.locator("#mic-ok").click()
    token = token_from(page)

    saved: list[str] = []
    with server.client(token) as client:
        while time.monotonic() - began < length_s + 60 and len(saved) < len(ANSWERS):
            page.wait_for_timeout(2000)  # the page's routes are served only while playwright runs
            turns = client.get("/v1/interviews/current/transcript").json()
            saved = [t["text"] for t in turns if t["speaker"] == "participant"]
    assert len(saved) >= len(ANSWERS), f"{len(saved)} turns saved: {saved}\n{server.log()[-3000:]}"
    assert all(text.strip() for text in saved)
    # The last answer is saved before its reply: wait for the question after it (the opening, then one each).
    deadline = time.monotonic() + 60
    while len(speech_requests) <= len(ANSWERS) and time.monotonic() < deadline:
        page.wait_for_timeout(500)

    # The end of a turn: the first chunk the server answered "end_of_turn" for since the last question
    # (the recorder's last piece, sent as it stops, is answered so too).
    ends = [at for at, response in chunk_responses if response.ok and response.json().get("end_of_turn")]
    waits, asked = [], 0.0
    for question in speech_requests:
        first = next((end for end in ends if asked < end < question), None)
        if first is not None:
            waits.append(question - first)
        asked = question
    print("end of turn → next question's audio requested, per turn (s):", " ".join(f"{w:.2f}" for w in waits))
    if waits:
        p95 = float(np.percentile(waits, 95))
        print(f"p50 {statistics.median(waits):.2f} s, p95 {p95:.2f} s over {len(waits)} turns")
    heard, asked = [], 0.0
    for question in wall_questions:  # per turn: its first end, then the first voice after it
        end = next((at for at in wall_ends if asked < at < question), None)
        if end is not None:
            heard.append(min(at for at in voices if at > end) - end)
        asked = question
    print("end of turn → the interviewer's voice again (acknowledgement or question), per turn (s):",
          " ".join(f"{w:.2f}" for w in heard))  # fmt: skip
    if heard:
        print(
            f"p50 {statistics.median(heard):.2f} s, p95 {float(np.percentile(heard, 95)):.2f} s over {len(heard)} turns"
        )
    assert len(waits) >= len(ANSWERS)
    assert not problems, problems
