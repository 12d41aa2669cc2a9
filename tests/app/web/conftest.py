"""The real server in a subprocess, a participant's voice as a WAV file, and Chromium with that voice as its microphone.

The browser is Debian's ``chromium`` driven by the ``playwright`` package (never a browser of its
own download). Chromium's fake microphone plays a WAV file; a 24-bit, µ-law or MP3 file, or a
missing one, plays *silence* without any error, so every voice file is checked to be audible.
"""

from __future__ import annotations

import io
import re
import wave
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from tests.plugins.browser_tools import CHROMIUM, SKIP_REASON
from tests.support.servers import SERVER_START_S, ServerProcess, free_port  # noqa: F401 - the tests import them here

LEADING_SILENCE_S = 1.5  # the fake microphone starts before the page listens
TRAILING_SILENCE_S = 3.0  # longer than the end-of-turn silence, so the turn ends by itself

NO_CHROMIUM = SKIP_REASON  # tests/plugins/browser_tools.py names these skips loudly at the end of the run


def words(text: str) -> list[str]:
    """Lower-case words without punctuation."""
    return re.findall(r"[a-z0-9']+", text.lower())


# --- the participant's voice ---------------------------------------------------------------


@dataclass(frozen=True)
class Voice:
    """A 16-bit mono PCM WAV of a sentence between silences, and the sentence."""

    path: Path
    text: str
    sample_rate: int
    speech_s: float


def synthesize_voice(path: Path, text: str) -> Voice:
    """``text`` spoken by Piper, with leading and trailing silence, written as 16-bit PCM WAV at ``path``."""
    from interviewer.speaking.speech import PiperSpeaker, wav_samples

    speaker = PiperSpeaker(threads=2)
    try:
        speech = speaker.synthesize(text)
    finally:
        speaker.close()
    rate = speech.sample_rate
    samples = wav_samples(speech)
    audio = np.concatenate(
        [np.zeros(round(LEADING_SILENCE_S * rate)), samples, np.zeros(round(TRAILING_SILENCE_S * rate))]
    )
    microphone_wav(path, audio, rate)
    return Voice(path=path, text=text, sample_rate=rate, speech_s=len(samples) / rate)


def microphone_wav(path: Path, audio: np.ndarray, rate: int = 16_000) -> Path:
    """``audio`` (float in [-1, 1]) written as the 16-bit PCM WAV Chromium's fake microphone plays."""
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2").tobytes())
    assert_audible(path)
    return path


def assert_audible(path: Path) -> None:
    """The WAV is 16-bit PCM and holds speech: Chromium plays other formats as silence, silently."""
    with wave.open(str(path), "rb") as source:
        assert source.getsampwidth() == 2, "Chromium's fake microphone needs 8/16/32-bit PCM, not 24-bit"
        assert source.getnchannels() == 1
        frames = source.readframes(source.getnframes())
    samples = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0
    assert samples.size > 0, f"{path} holds no samples"
    peak = float(np.max(np.abs(samples)))
    loud = float(np.mean(np.abs(samples) > 0.02))
    assert peak > 0.1, f"{path} is silent (peak {peak:.4f})"
    assert loud > 0.05, f"{path} is nearly silent ({loud:.1%} of samples above -34 dBFS)"


def piper_speech(text: str) -> np.ndarray:
    """``text`` spoken by Piper, as float32 mono at 16 kHz (what an upload decodes to)."""
    from interviewer.hearing.transcription import decode_audio
    from interviewer.speaking.speech import PiperSpeaker

    speaker = PiperSpeaker(threads=2)
    try:
        return decode_audio(speaker.synthesize(text).wav)
    finally:
        speaker.close()


def webm_opus(samples: np.ndarray, sample_rate: int = 16_000) -> bytes:
    """Float mono audio encoded as a browser's MediaRecorder does: Opus in WebM, 48 kHz."""
    import av

    resampler = av.AudioResampler(format="flt", layout="mono", rate=48_000)
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="webm") as container:
        stream = container.add_stream("libopus", rate=48_000, layout="mono")
        stream.bit_rate = 64_000
        frame = av.AudioFrame.from_ndarray(np.asarray(samples, dtype=np.float32)[None, :], format="flt", layout="mono")
        frame.sample_rate = sample_rate
        for resampled in [*resampler.resample(frame), *resampler.resample(None)]:
            for packet in stream.encode(resampled):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return buffer.getvalue()


def split_chunks(data: bytes, count: int) -> list[bytes]:
    """``data`` cut into ``count`` consecutive pieces, as MediaRecorder's timeslices cut one stream:
    only the first piece carries the header, so the pieces decode only when joined in order."""
    size = -(-len(data) // count)
    return [data[i : i + size] for i in range(0, len(data), size)]


# --- the server ------------------------------------------------------------------------------


@pytest.fixture
def serve(fresh_database: str, tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """Start the real API server (its own process) on a fresh migrated database; stopped after the test."""
    started: list[ServerProcess] = []

    def start(**env: str) -> ServerProcess:
        server = ServerProcess(
            database_url=fresh_database,
            data_dir=tmp_path / "server-data",
            log_path=tmp_path / "server.log",
            env_overrides={f"AGENTBANK_{k.upper()}": v for k, v in env.items()},
        )
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()


def create_invitation(database_url: str) -> str:
    """An invitation code, created the way an operator does (the service, in its own transaction)."""
    from agentbank.audit import log as audit
    from interviewer.session.invitations import create_invitation as create

    engine = create_engine(database_url)
    try:
        with Session(engine) as session, session.begin():
            return create(session, audit.Actor("operator", "test"))
    finally:
        engine.dispose()


# --- the browser -----------------------------------------------------------------------------


def chromium_args(voice: Path | None, *, loop: bool = False, microphone: bool = True) -> list[str]:
    """Headless Chromium with nothing reaching beyond this machine; with ``voice``, a fake microphone
    that speaks it once (or for ever with ``loop``), allowed unless ``microphone`` is False."""
    args = [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--no-first-run",
        "--no-default-browser-check",
        "--autoplay-policy=no-user-gesture-required",
    ]
    if voice is not None:
        once = "" if loop else "%noloop"
        args += ["--use-fake-device-for-media-stream", f"--use-file-for-fake-audio-capture={voice.resolve()}{once}"]
        if microphone:
            args.append("--use-fake-ui-for-media-stream")
    return args


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """The one way the tests open Chromium: ``chromium(voice=None, *, loop=False, microphone=True)``
    launches a fresh profile and returns its BrowserContext; everything launched closes after the test."""
    if not CHROMIUM.is_file():
        pytest.skip(NO_CHROMIUM)
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    contexts: list[Any] = []

    def launch(voice: Path | None = None, *, loop: bool = False, microphone: bool = True) -> Any:
        if voice is not None:
            assert_audible(voice)
        allowed = voice is not None and microphone
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / f"profile-{len(contexts)}"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=chromium_args(voice, loop=loop, microphone=microphone),
            permissions=["microphone", "clipboard-read", "clipboard-write"] if allowed else [],
            accept_downloads=True,
        )
        contexts.append(context)
        return context

    try:
        yield launch
    finally:
        for context in contexts:
            context.close()
        playwright.stop()
