"""What the interview's browser tests share: a probe counting voices and recorders in the page, a
microphone that keeps speaking, the questions' speech under the test's control, and screenshots."""

from __future__ import annotations

import io
import time
import wave
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tests.support.docs_screens import keep_for_docs

# Counts, from inside the page, how many voices play and how many recorders record at once, and
# every state the page shows: a second voice or recorder is the failure these tests look for.
PROBE = """
(() => {
  const probe = { voices: 0, maxVoices: 0, recorders: 0, maxRecorders: 0, states: [] };
  window.__probe = probe;
  const playing = new Set();
  const count = () => { probe.voices = playing.size; probe.maxVoices = Math.max(probe.maxVoices, playing.size); };
  const play = HTMLMediaElement.prototype.play;
  HTMLMediaElement.prototype.play = function () {
    const element = this;
    playing.add(element); count();
    const off = () => { playing.delete(element); count(); };
    for (const name of ["pause", "ended", "emptied", "error"]) element.addEventListener(name, off, { once: true });
    return play.call(this).catch((error) => { off(); throw error; });
  };
  const start = MediaRecorder.prototype.start, stop = MediaRecorder.prototype.stop;
  MediaRecorder.prototype.start = function (...args) {
    if (!this.__on) {
      this.__on = true; probe.recorders++;
      probe.maxRecorders = Math.max(probe.maxRecorders, probe.recorders);
    }
    return start.apply(this, args);
  };
  MediaRecorder.prototype.stop = function (...args) {
    if (this.__on) { this.__on = false; probe.recorders--; }
    return stop.apply(this, args);
  };
  new MutationObserver(() => {
    const state = document.body && document.body.dataset.state;
    if (state && probe.states[probe.states.length - 1] !== state) probe.states.push(state);
  }).observe(document, { attributes: true, subtree: true, attributeFilter: ["data-state"] });
})();
"""


def tone_wav(seconds: float, rate: int = 16_000) -> bytes:
    """A quiet tone as a WAV: a question that plays for ``seconds``."""
    t = np.arange(round(seconds * rate)) / rate
    pcm = (0.05 * np.sin(2 * np.pi * 330 * t) * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


@dataclass
class QuestionVoice:
    """Serves the interviewer's speech: long while the test wants a question to be playing, else short."""

    long_s: float = 0.0
    served: list[float] = field(default_factory=list)

    def __call__(self, route, _request) -> None:
        seconds = self.long_s or 0.3
        self.served.append(seconds)
        route.fulfill(status=200, content_type="audio/wav", body=tone_wav(seconds), headers={"X-Speech-Parts": "1"})


def consent(page, url: str, *, length: str = "short") -> None:
    """Tick every consent box and begin (the short version unless told)."""
    page.goto(url)
    for box in page.locator("#consent-step input[type=checkbox]").all():
        box.check()
    choice = page.locator(f"input[name=length][value={length}]")
    if choice.count():
        choice.check()
    page.locator("#begin").click()


def wait_until(page, check: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll ``check`` while the page keeps running (its routes answer only while playwright runs)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        page.wait_for_timeout(200)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def probe(page) -> dict:
    return page.evaluate("() => window.__probe")


def screenshot(page, folder: Path, name: str) -> Path:
    """A full-page screenshot kept as a test artifact in ``folder`` (the test's own directory)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def chunk_seqs(database_url: str, turn: int) -> list[int]:
    """The sequence numbers of the audio chunks stored for ``turn``, in order."""
    from sqlalchemy import create_engine, select
    from sqlalchemy.orm import Session

    from agentbank.db.models import AudioChunk

    engine = create_engine(database_url)
    try:
        with Session(engine) as session:
            query = select(AudioChunk.seq).where(AudioChunk.turn == turn).order_by(AudioChunk.seq)
            return list(session.scalars(query).all())
    finally:
        engine.dispose()


def answers(client) -> list[str]:
    """The participant's saved answers, through the API."""
    response = client.get("/v1/interviews/current/transcript")
    assert response.status_code == 200, response.text
    return [t["text"] for t in response.json() if t["speaker"] == "participant"]


WIDTHS = (1280, 375)


def check_screen(page, folder: Path, name: str) -> list[str]:
    """At each width: no sideways scroll, no axe-core violation, a screenshot kept; the problems found."""
    from axe_playwright_python.sync_playwright import Axe

    problems: list[str] = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        page.wait_for_timeout(100)
        overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        if overflow > 0:
            problems.append(f"{name} at {width} px scrolls sideways by {overflow} px")
        results = Axe().run(page)
        if results.violations_count:
            problems.append(f"{name} at {width} px: {results.generate_snapshot()}")
        screenshot(page, folder, f"{name}-{width}")
        keep_for_docs(page, f"{name}-{width}")
    page.set_viewport_size({"width": 1280, "height": 800})
    return problems
