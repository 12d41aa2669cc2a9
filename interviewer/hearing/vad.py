"""Where a participant speaks and where they are silent, judged from the audio as it arrives, frame by
frame; and where a recording may be cut for transcribing ahead (``cut_point``).

Two detectors share one interface (``VoiceDetector``): Silero VAD (``silero_vad``), the bank's own, which
tells speech from a fan, typing or a quiet voice; and energy against an adaptive noise floor, in 30 ms
frames, which needs no model and hears any loud sound as speech (tests that speak in tones use it).
``ended`` answers a fixed trailing silence of ``silence_s``; the interview's end of turn weighs the words
too (``turn_end``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

SAMPLE_RATE = 16_000

FRAME_S = 0.03
# A frame is speech when it is this far above the noise floor...
SPEECH_MARGIN_DB = 10.0
# ...and above this absolute level, so a quiet room's rustle never counts, however still the room.
MIN_SPEECH_DBFS = -50.0
# The noise floor is a low percentile of the levels of the last few seconds: steady noise (a fan, a
# hum) becomes floor within the window, while speech, with its dips between words, never does. A
# percentile rather than the minimum, so one dropped (all-zero) frame does not sink the floor.
NOISE_WINDOW_S = 5.0
NOISE_PERCENTILE = 10.0
# Transcribe ahead once this much audio not yet transcribed ends in a pause: long enough for Whisper
# to have context, short enough that little is left when the participant stops.
PARTIAL_MIN_S = 8.0
# A cut needs this much silence (by the end-of-turn detector's frames), so it never falls in a word;
# it is made in the middle of the pause...
CUT_PAUSE_S = 0.3
# ...and this far from the end of the audio received so far, whose last samples may still change as
# more of the recording arrives (a packet cut in two, the resampler's tail).
CUT_MARGIN_S = 0.5


class VoiceDetector(Protocol):
    """Fed 16 kHz mono audio piece by piece; which frames were speech, and the silence since the last."""

    frame: int  # samples per frame
    speech: list[bool]  # one per frame fed so far
    ended: bool

    @property
    def speech_started(self) -> bool: ...

    @property
    def speech_s(self) -> float: ...

    @property
    def trailing_silence_s(self) -> float: ...

    @property
    def speech_end_s(self) -> float | None: ...

    @property
    def heard_s(self) -> float: ...

    def feed(self, audio: np.ndarray) -> bool: ...

    def tally(self) -> Tally: ...


@dataclass(frozen=True)
class Tally:
    """What a detector has heard, as of its last frame: read once after each feed by whoever asks often
    (``turn_end.Listener``), so asking costs no call into the detector."""

    speech_started: bool
    speech_s: float
    trailing_silence_s: float
    speech_end_s: float | None


NOTHING_HEARD = Tally(speech_started=False, speech_s=0.0, trailing_silence_s=0.0, speech_end_s=None)


def as_float(audio: np.ndarray) -> np.ndarray:
    """Samples as float32 in [-1, 1] (int16 scaled)."""
    samples = np.asarray(audio).reshape(-1)
    return samples.astype(np.float32) / 32768.0 if samples.dtype == np.int16 else samples.astype(np.float32)


class FrameTally:
    """What a detector answers from the frames it judged, whichever way it judged them: how much speech,
    where the last of it ended and how long the silence since has lasted, in seconds."""

    frame_s: float
    ended: bool
    _frames: int  # frames judged
    _speech_frames: int
    _last_speech_frame: int  # -1 before any
    _min_speech_frames: int
    _silence_frames: int

    def _count(self, is_speech: bool) -> None:
        """One more frame judged: the tally, and the fixed rule's end (``silence_s`` after enough speech)."""
        if is_speech:
            self._speech_frames += 1
            self._last_speech_frame = self._frames
        self._frames += 1
        if self.speech_started and self._frames - 1 - self._last_speech_frame >= self._silence_frames:
            self.ended = True

    @property
    def speech_started(self) -> bool:
        """Whether enough speech has been heard for this to be a turn."""
        return self._speech_frames >= self._min_speech_frames

    @property
    def speech_s(self) -> float:
        """Seconds of speech heard so far."""
        return self._speech_frames * self.frame_s

    @property
    def trailing_silence_s(self) -> float:
        """Seconds of silence since the last speech (or since the start)."""
        return (self._frames - 1 - self._last_speech_frame) * self.frame_s

    @property
    def speech_end_s(self) -> float | None:
        """Where the last speech frame ended, in seconds from the start, if any was heard."""
        return None if self._last_speech_frame < 0 else (self._last_speech_frame + 1) * self.frame_s

    @property
    def heard_s(self) -> float:
        """Seconds of audio judged so far (whole frames)."""
        return self._frames * self.frame_s

    def tally(self) -> Tally:
        """What has been heard so far, at once."""
        return Tally(self.speech_started, self.speech_s, self.trailing_silence_s, self.speech_end_s)


class EndOfTurnDetector(FrameTally):
    """The energy detector. Fed 16 kHz mono audio chunk by chunk; ``feed`` answers whether the turn has
    ended (speech, then ``silence_s`` of silence).

    Speech must last ``min_speech_s`` in all before a turn counts as begun, so a click or a cough
    alone does not start one.
    """

    def __init__(
        self,
        *,
        silence_s: float = 2.0,
        min_speech_s: float = 0.25,
        sample_rate: int = 16_000,
    ) -> None:
        if silence_s <= 0 or min_speech_s < 0:
            raise ValueError("silence_s must be positive and min_speech_s not negative")
        self.sample_rate = sample_rate
        self.frame_s = FRAME_S
        self.frame = round(FRAME_S * sample_rate)
        self._silence_frames = max(1, round(silence_s / FRAME_S))
        self._min_speech_frames = max(1, round(min_speech_s / FRAME_S))
        self._window_frames = round(NOISE_WINDOW_S / FRAME_S)
        self.reset()

    def reset(self) -> None:
        """Forget everything heard, for the next turn."""
        self._pending = np.zeros(0, dtype=np.float32)
        self._levels = np.zeros(self._window_frames)
        self._frames = 0
        self._speech_frames = 0
        self._last_speech_frame = -1
        self.ended = False

    def feed(self, audio: np.ndarray) -> bool:
        """Take the next samples (float in [-1, 1] or int16); True once the turn has ended."""
        self._pending = np.concatenate([self._pending, as_float(audio)])
        whole = len(self._pending) // self.frame
        if whole:
            frames = self._pending[: whole * self.frame].reshape(whole, self.frame)
            self._pending = self._pending[whole * self.frame :]
            levels = 10.0 * np.log10(np.maximum(np.mean(frames.astype(np.float64) ** 2, axis=1), 1e-12))
            for level in levels:
                self._step(float(level))
        return self.ended

    def _step(self, level_db: float) -> None:
        self._levels[self._frames % self._window_frames] = level_db
        floor_db = float(np.percentile(self._levels[: min(self._frames + 1, self._window_frames)], NOISE_PERCENTILE))
        self._count(level_db > max(floor_db + SPEECH_MARGIN_DB, MIN_SPEECH_DBFS))


class FrameDetector(EndOfTurnDetector):
    """The energy detector, also keeping which 30 ms frames were speech (to cut at pauses)."""

    def reset(self) -> None:
        super().reset()
        self.speech: list[bool] = []

    def _step(self, level_db: float) -> None:
        heard = self._speech_frames
        super()._step(level_db)
        self.speech.append(self._speech_frames > heard)


def cut_point(speech: list[bool], frame: int, start: int, total: int) -> int | None:
    """Where a span from sample ``start`` may end: the middle of the latest pause of ``CUT_PAUSE_S``
    or more, at least ``PARTIAL_MIN_S`` after ``start`` and ``CUT_MARGIN_S`` before ``total``."""
    earliest = start + round(PARTIAL_MIN_S * SAMPLE_RATE)
    latest = total - round(CUT_MARGIN_S * SAMPLE_RATE)
    if latest <= earliest:
        return None
    need = max(1, round(CUT_PAUSE_S * SAMPLE_RATE / frame))
    run_end: int | None = None  # scanning backwards: one past the last frame of the current pause
    for index in range(min(len(speech), total // frame) - 1, start // frame - 1, -1):
        if not speech[index]:
            if run_end is None:
                run_end = index + 1
            continue
        if run_end is not None and run_end - (index + 1) >= need:
            cut = (index + 1 + run_end) * frame // 2
            if earliest <= cut <= latest:
                return cut
            if cut < earliest:
                return None
        run_end = None
    return None
