"""A recording's model calls in flight: the end-of-turn model's on a pause, and Whisper's on a pause's words
or on a span heard ahead (``listening`` asks for them and applies what comes back). Kept on the recording
(``frames.Recording.calls``), so the next chunk's request finds them.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass, field

from interviewer.hearing.partials import Ahead
from interviewer.hearing.ports import Transcription
from interviewer.hearing.thoughts import Pause, Thought


@dataclass(frozen=True)
class VoiceCall:
    """The end-of-turn model hearing a pause."""

    at: float | None  # the speech end of the pause the end-of-turn model hears
    future: Future[float]


@dataclass(frozen=True)
class WordsCall:
    """Whisper hearing the words before a pause, to judge whether they end a thought."""

    pause: Pause
    end: int  # the samples heard: the recording up to the moment it was asked for
    digests: list[str]
    future: Future[tuple[str, Thought]]
    asked: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class SpanCall:
    """Whisper hearing a span of the answer ahead, while the person speaks on."""

    start: int
    end: int
    digests: list[str]
    kept: list[str]  # the spans before ``start``
    future: Future[Transcription]
    asked: float = field(default_factory=time.monotonic)


@dataclass
class Calls:
    """One recording's calls in flight: the end-of-turn model's and Whisper's (one of each at a time)."""

    voice: VoiceCall | None = None
    whisper: WordsCall | SpanCall | None = None
    spans: Ahead | None = None  # the spans stored for the recording, as last read
