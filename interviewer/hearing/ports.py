"""What hearing needs from outside: a transcriber, and what it gives back.

The transcriber is a port: faster-whisper and a fake implement it (``transcription``), and so does an
OpenAI-compatible endpoint (``remote``); the services an interview runs with carry one (``interviewer.services``).
Nothing here knows which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class Segment:
    """A stretch of speech, in seconds from the start of the audio."""

    start: float
    end: float
    text: str


@dataclass(frozen=True)
class Transcription:
    """What was said: the whole text, its timed segments, the audio's length and the time it took."""

    text: str
    segments: tuple[Segment, ...] = ()
    duration_s: float = 0.0
    model: str = ""
    seconds: float = 0.0


@runtime_checkable
class Transcriber(Protocol):
    """Float32 mono 16 kHz audio to text. ``context`` (the question just asked) may guide spelling."""

    @property
    def name(self) -> str:
        """The model's name, recorded with every transcript."""
        ...

    def transcribe(self, audio: np.ndarray, *, context: str | None = None) -> Transcription: ...

    def close(self) -> None: ...
