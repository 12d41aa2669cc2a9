"""The voice stack's check for `agentbank doctor`: speak a sentence, transcribe it back, and hear whether
its voice sounds finished."""

from __future__ import annotations

import re
import time

import numpy as np

from agentbank.core.settings import Settings
from agentbank.runtime.doctor import Check
from interviewer.hearing.transcription import SAMPLE_RATE, decode_audio
from interviewer.hearing.turn_end import TurnTaking
from interviewer.providers import build_speaker, build_transcriber

PROBE = "Tell me about the place where you grew up."


def check_speech(settings: Settings) -> Check:
    """Synthesize a question, transcribe it back, and report the speed of both and the words kept."""
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
    taking = TurnTaking.of(settings)
    model = taking.voice_model()
    if model is not None:
        # The question spoken to its end, and the pause after it: a voice that has finished.
        began = time.perf_counter()
        finished = model.probability(np.concatenate([audio, np.zeros(round(taking.pause_s * SAMPLE_RATE))]))
        check.facts["end of turn"] = (
            f"{settings.end_of_turn_voice}: {finished:.2f} that the question has finished, "
            f"in {1000 * (time.perf_counter() - began):.0f} ms"
        )
    if settings.transcriber != "fake" and settings.speaker != "fake" and len(kept) < len(words) * 0.7:
        check.status, check.hint = "warn", "the transcriber heard few of the spoken words; check the model packages"
    return check
