"""Ten spoken turns in a real browser with the embedded models (Whisper and the interviewer's chat model):
each answer spoken into the page's microphone once the question has been asked, as a person would, its end
detected by the server, the next question asked; the wait from the end of each turn to the next question's
audio is printed, never asserted (the figures belong to benchmarks; here what must hold is that every turn
ends and is saved, however slow the machine)."""

from __future__ import annotations

import base64
import statistics
import time

import numpy as np
import pytest

from tests.app.web.conftest import create_invitation
from tests.support.interview_pages import short_wav, token_from

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
# The person's microphone: a stream the test speaks into, silent until an answer is played. A file played by
# the browser's fake device runs on its own clock: on a slow machine an answer was spoken to a page still
# waiting for its question, and lost, which is not what a person does.
MICROPHONE = """(() => {
  const context = new AudioContext();
  const out = context.createMediaStreamDestination();
  // A quiet room's hiss (about -70 dBFS) always playing: a stream with no source is not recorded at all, so
  // the silence that ends an answer would never reach the server.
  const room = context.createBufferSource();
  room.buffer = context.createBuffer(1, context.sampleRate, context.sampleRate);
  const hiss = room.buffer.getChannelData(0);
  for (let i = 0; i < hiss.length; i++) hiss[i] = (Math.random() * 2 - 1) * 3e-4;
  room.loop = true;
  room.connect(out);
  room.start();
  navigator.mediaDevices.getUserMedia = async () => out.stream;
  window.personSays = async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const source = context.createBufferSource();
    source.buffer = await context.decodeAudioData(bytes.buffer);
    source.connect(out);
    source.start();
    // When the answer began, on the wall clock, and how long it lasts.
    return [performance.timeOrigin + performance.now(), source.buffer.duration];
  };
})();"""
QUESTION_WAIT_S = 180  # the first question after an answer loads the embedded chat model


def spoken_answers() -> list[tuple[str, float]]:
    """Every answer spoken by Piper, each as its WAV in base64, with the silence after its last word (s)."""
    from interviewer.hearing.transcription import SAMPLE_RATE, decode_audio
    from interviewer.speaking.speech import PiperSpeaker

    speaker = PiperSpeaker(threads=2)
    try:
        spoken = [speaker.synthesize(text).wav for text in ANSWERS]
    finally:
        speaker.close()
    answers = []
    for wav in spoken:
        audio = decode_audio(wav)
        loud = np.flatnonzero(np.abs(audio) > LOUD)
        answers.append((base64.b64encode(wav).decode(), (len(audio) - loud[-1] - 1) / SAMPLE_RATE))
    return answers


LOUD = 0.01  # a sample of speech, not of the silence after it (Piper's silence is near zero)


def test_ten_spoken_turns_each_end_and_are_saved(serve, chromium, fresh_database):
    answers = spoken_answers()
    server = serve(chat_provider="embedded", transcriber="embedded", speaker="fake")
    code = create_invitation(fresh_database)
    context = chromium()
    context.add_init_script(MICROPHONE)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    chunk_responses: list[tuple[float, object]] = []
    speech_requests: list[float] = []
    page.on("response", lambda r: chunk_responses.append((time.monotonic(), r)) if "/chunks/" in r.url else None)
    # Every start of the interviewer's voice (the "Thank you." said at the end of a turn, or a question),
    # stamped by the browser on the wall clock: the first one after an end of turn is when the person hears
    # the interviewer again.
    voices: list[float] = []
    page_ends: list[float] = []  # each end of a spoken turn, stamped by the page as it happens
    wall_questions: list[float] = []
    page.expose_function("voiceStarted", lambda at_ms: voices.append(at_ms / 1000))
    page.expose_function("turnEnded", lambda at_ms: page_ends.append(at_ms / 1000))
    page.add_init_script(
        "(() => { const play = HTMLMediaElement.prototype.play; HTMLMediaElement.prototype.play = function () {"
        " window.voiceStarted(performance.timeOrigin + performance.now()); return play.apply(this, arguments); };"
        " })();"
    )

    def question_speech(route, request) -> None:
        # The question is "spoken" at once (a short silence), so the person answers as soon as it is asked.
        if "part=0" in request.url:
            speech_requests.append(time.monotonic())
            wall_questions.append(time.time())
        route.fulfill(status=200, content_type="audio/wav", body=short_wav(), headers={"X-Speech-Parts": "1"})

    def ended_turns() -> int:
        return sum(1 for _, r in chunk_responses if r.ok and r.json().get("end_of_turn"))  # type: ignore[attr-defined]

    page.route("**/v1/interviews/current/speech*", question_speech)
    page.goto(f"{server.url}/interview#invite={code}")
    for box in page.get_by_role("checkbox").all():
        box.check()
    page.locator("#begin").click()
    page.wait_for_function("document.getElementById('level').style.width !== ''", timeout=15_000)
    page.locator("#mic-ok").click()
    token = token_from(page)
    # The page's own moment a spoken turn ends (listening → sending, where it thanks the person at once): the
    # test process hears of the response that ended it only after the page has acted on it.
    page.evaluate(
        "() => { const set = window.setState; window.setState = (next) => { if (next === 'sending' &&"
        " document.body.dataset.state === 'listening') window.turnEnded(performance.timeOrigin + performance.now());"
        " return set(next); }; }"
    )

    speech_ends: list[float] = []  # where each answer's last word ended, on the wall clock
    for n, (answer, silence_after_s) in enumerate(answers):
        # Asked (the opening, then a question after each answer), the person answers after a breath, then
        # waits for the interviewer to take the turn.
        deadline = time.monotonic() + QUESTION_WAIT_S
        while len(speech_requests) <= n and time.monotonic() < deadline:
            page.wait_for_timeout(250)
        page.wait_for_function("document.body.dataset.state === 'listening'", timeout=QUESTION_WAIT_S * 1000)
        page.wait_for_timeout(400)
        before = ended_turns()
        began_ms, length_s = page.evaluate("b64 => window.personSays(b64)", answer)
        speech_ends.append(began_ms / 1000 + length_s - silence_after_s)
        deadline = time.monotonic() + length_s + 30
        while ended_turns() == before and time.monotonic() < deadline:
            page.wait_for_timeout(250)  # the page's routes are served only while playwright runs
        assert ended_turns() > before, f"answer {n + 1} never ended its turn\n{server.log()[-3000:]}"
    # The last answer is saved before its reply: wait for the question after it (the opening, then one each).
    deadline = time.monotonic() + QUESTION_WAIT_S
    while len(speech_requests) <= len(ANSWERS) and time.monotonic() < deadline:
        page.wait_for_timeout(500)
    with server.client(token) as client:
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
        end = next((at for at in page_ends if asked < at < question), None)
        if end is not None:
            heard.append(min(at for at in voices if at > end) - end)
        asked = question
    print("end of turn → the interviewer's voice again (acknowledgement or question), per turn (s):",
          " ".join(f"{w:.2f}" for w in heard))  # fmt: skip
    if heard:
        print(
            f"p50 {statistics.median(heard):.2f} s, p95 {float(np.percentile(heard, 95)):.2f} s over {len(heard)} turns"
        )
    # What the person lives: from their last word to the interviewer's voice, and to the end of the turn.
    lived = [min((at for at in voices if at > end), default=float("nan")) - end for end in speech_ends]
    to_end = [min((at for at in page_ends if at > end), default=float("nan")) - end for end in speech_ends]
    for what, figures in (("the interviewer's voice", lived), ("the end of the turn", to_end)):
        print(f"end of speech → {what}, per turn (s):", " ".join(f"{w:.2f}" for w in figures))
        print(f"p50 {np.nanmedian(figures):.2f} s, p95 {float(np.nanpercentile(figures, 95)):.2f} s")
    assert len(waits) >= len(ANSWERS)
    assert not problems, problems
