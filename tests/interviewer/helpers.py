"""Builders shared by the interview tests: a simulated interviewee's model and WAV audio."""

from __future__ import annotations

import io
import wave

import numpy as np

from agentbank.providers.fakes import ScriptedChatModel
from interviewer.decisions import NOTES_SCHEMA

# Distinct follow-ups: the interviewer rejects one that repeats a question asked before.
FOLLOW_UPS = (
    "Could you tell me more about that?",
    "Who else was there at the time?",
    "How did it change things afterwards?",
    "Can you give me an example?",
)


def interviewer_model(follow_ups: int = 1) -> ScriptedChatModel:
    """Asks ``follow_ups`` follow-ups after each scripted question, then moves on; asked for notes, notes
    the first word of the newest answer."""
    asked: dict[str, int] = {}

    def respond(messages, schema):
        if schema == NOTES_SCHEMA:
            answers = messages[-1]["content"].split("in these answers:\n")[1]
            newest = [line for line in answers.split("\n") if line.startswith("- ")][-1]
            return {"notes": [f"Said {newest.split()[1]}."]}
        question = messages[-1]["content"].split('now being discussed: "')[1].split('"')[0]
        asked[question] = asked.get(question, 0) + 1
        if asked[question] <= follow_ups:
            return {
                "decision": {
                    "action": "follow_up",
                    "question": FOLLOW_UPS[(asked[question] - 1) % len(FOLLOW_UPS)],
                }
            }
        return {"decision": {"action": "next"}}

    return ScriptedChatModel(respond, name="interviewer")


def wav_bytes(seconds: float = 1.0, *, tone: bool = True, rate: int = 16_000) -> bytes:
    """A 16-bit mono WAV: silence, a tone (speech enough for the fakes), silence; or silence only.

    The leading silence lets the end-of-turn detector learn the noise floor before the "speech".
    """
    samples = np.zeros(int(seconds * rate), dtype=np.float32)
    if tone:
        lead, voiced = int(min(seconds, 0.5) * rate / 2), int(min(seconds, 0.8) * rate)
        samples[lead : lead + voiced] = 0.3 * np.sin(2 * np.pi * 220 * np.arange(voiced) / rate)[: len(samples) - lead]
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((samples * 32767).astype("<i2").tobytes())
    return buffer.getvalue()
