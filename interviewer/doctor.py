"""The voice stack's check for `agentbank doctor`: speak a sentence, transcribe it back, and hear whether
a finished question sounds finished.

The end-of-turn model hears a recording shipped with the bank (``interviewer/hearing/data/finished.wav``,
made by ``scripts/make_doctor_recording.py``), not the sentence just spoken: Piper draws each sound's length
and its pitch's noise from random numbers seeded afresh in each process, and Smart Turn heard the same
sentence freshly spoken as finished with 0.08 to 0.96 on five runs, so the answer was a coin. On the same
samples Smart Turn gives the same probability every time, so the doctor gives the same answer every run.
The probe's own sentence was a poor one to hear, besides: an instruction, not a question, heard at 0.20 to
0.86 under six seeds by that script, where four questions were heard at 0.94 to 0.99 under every seed.
"""

from __future__ import annotations

import hashlib
import io
import re
import time
import wave
from importlib.resources import files
from importlib.resources.abc import Traversable

import numpy as np

from agentbank.core.settings import Settings
from agentbank.runtime.doctor import Check, Status
from interviewer.hearing.smart_turn import TurnModel
from interviewer.hearing.transcription import decode_audio
from interviewer.hearing.turn_end import TurnTaking, Voice
from interviewer.providers import build_speaker, build_transcriber

PROBE = "Tell me about the place where you grew up."
# A finished question in the bank's Piper voice, 0.25 s of silence before it and 0.3 s after it (the pause at
# which the bank first asks the end-of-turn model), 16 kHz mono 16-bit.
RECORDING: Traversable = files("interviewer.hearing") / "data" / "finished.wav"
RECORDING_TEXT = "What did you do for a living before you retired?"
RECORDING_SHA256 = "c43eab337f84e8a7b015dd6a69fec57b35740e9ff973816d9cd44cf9cc209a37"
RECORDING_PROBABILITY = 0.9885  # what Smart Turn v3.2 heard in it when it was made
_SEVERITY: dict[Status, int] = {"ok": 0, "warn": 1, "fail": 2}


class DamagedRecording(Exception):
    """The shipped recording is missing or not the one the bank was released with."""


def finished_recording(data: bytes | None = None) -> np.ndarray:
    """The shipped recording's samples (``data``: its bytes, read from the package when None), float32 in
    [-1, 1]; raises ``DamagedRecording`` when the file is missing or its sha256 is not ``RECORDING_SHA256``."""
    if data is None:
        try:
            data = RECORDING.read_bytes()
        except OSError as exc:
            raise DamagedRecording(f"{RECORDING.name} is missing ({type(exc).__name__})") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != RECORDING_SHA256:
        raise DamagedRecording(f"{RECORDING.name} is damaged (sha256 {digest[:12]}…, not {RECORDING_SHA256[:12]}…)")
    with wave.open(io.BytesIO(data), "rb") as source:
        frames = source.readframes(source.getnframes())
    return np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0


def _worsen(check: Check, status: Status, hint: str) -> None:
    """Set ``status`` and its hint unless the check is already as bad or worse."""
    if _SEVERITY[status] > _SEVERITY[check.status]:
        check.status, check.hint = status, hint


def hear_end_of_turn(
    check: Check, settings: Settings, recording: bytes | None = None, model: TurnModel | None = None
) -> float | None:
    """Play the shipped recording of a finished question (``recording``: other bytes in its place) to the
    end-of-turn model the settings name (``model``: this one instead), and warn when it does not sound
    finished to it (the bank would then wait for the words at every pause); a missing or damaged recording
    fails, since nothing can be heard. The probability heard (None: no voice model, or nothing heard)."""
    taking = TurnTaking.of(settings)
    if model is None and taking.voice is Voice.NONE:
        return None
    try:
        audio = finished_recording(recording)
    except DamagedRecording as exc:
        check.facts["end of turn"] = f"{settings.end_of_turn_voice}: not heard, {exc}"
        _worsen(check, "fail", "the doctor's recording of a finished question is damaged; reinstall the bank")
        return None
    if model is None:
        model = taking.voice_model()
        if model is None:
            return None
    began = time.perf_counter()
    finished = model.probability(audio)
    check.facts["end of turn"] = (
        f"{settings.end_of_turn_voice}: {finished:.2f} that the question has finished "
        f"(the recording shipped with the bank), in {1000 * (time.perf_counter() - began):.0f} ms"
    )
    if finished < taking.sure_above:
        _worsen(
            check,
            "warn",
            f"the end-of-turn model heard a finished question as unfinished (below {taking.sure_above:g}); "
            "check the model packages (agentbank models install) and AGENTBANK_END_OF_TURN_SURE_ABOVE",
        )
    return finished


def check_speech(settings: Settings) -> Check:
    """Synthesize a question, transcribe it back, and report the speed of both and the words kept; then hear
    whether the end-of-turn model hears a finished question as finished."""
    check = Check("speech")
    speaker, transcriber = build_speaker(settings), build_transcriber(settings)
    try:
        check.facts["models"] = f"{speaker.name} ({settings.speaker}), {transcriber.name} ({settings.transcriber})"
        began = time.perf_counter()
        speech = speaker.synthesize(PROBE)
        spoken = time.perf_counter() - began
        audio = decode_audio(speech.wav)
        began = time.perf_counter()
        heard = transcriber.transcribe(audio).text
        heard_s = time.perf_counter() - began
    finally:
        speaker.close()
        transcriber.close()
    check.facts["speech"] = f"{speech.duration_s:.1f} s of audio in {spoken:.2f} s"
    check.facts["transcription"] = f"real-time factor {heard_s / max(speech.duration_s, 1e-6):.2f}"
    words = set(re.findall(r"[a-z]+", PROBE.lower()))
    kept = words & set(re.findall(r"[a-z]+", heard.lower()))
    check.facts["round trip"] = f"{len(kept)} of {len(words)} words heard back"
    hear_end_of_turn(check, settings)
    if settings.transcriber != "fake" and settings.speaker != "fake" and len(kept) < len(words) * 0.7:
        _worsen(check, "warn", "the transcriber heard few of the spoken words; check the model packages")
    return check
