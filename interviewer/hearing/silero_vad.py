"""Silero VAD, frame by frame as the audio arrives: the voice activity detector of spoken answers.

The model is the one faster-whisper ships inside its package (``faster_whisper.vad``, an ONNX file run by
onnxruntime, both already needed to transcribe), so no other model is downloaded and torch is not needed.
Silero is a small recurrent network trained on speech in many kinds of noise: a fan, typing or music keep
a low probability of speech, and a quiet voice a high one, where an energy threshold hears a keyboard as
speech and a quiet voice as silence. Its state is carried from one 32 ms window to the next, so a recording
fed in pieces is judged exactly as if it were fed whole.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import numpy as np

from interviewer.hearing.vad import SAMPLE_RATE, FrameTally, as_float

WINDOW = 512  # samples per window at 16 kHz (32 ms), as the model was trained
CONTEXT = 64  # samples of the previous window the model sees before each one
WINDOW_S = WINDOW / SAMPLE_RATE
# A window is speech from this probability on, and speech goes on while it stays above the lower one
# (Silero's own defaults: hysteresis keeps one soft syllable from ending a word).
THRESHOLD = 0.5
RELEASE = 0.35
# Windows run through the model at once, when a piece brings many (a whole recording after a restart).
BATCH = 256


@functools.lru_cache(maxsize=1)
def _session() -> Any:
    """The model, loaded once per process (onnxruntime's sessions may be run from several threads)."""
    from faster_whisper.vad import get_vad_model

    return get_vad_model().session


class SileroDetector(FrameTally):
    """Speech and silence in 32 ms frames by Silero VAD; ``feed`` answers whether ``silence_s`` of
    silence has followed ``min_speech_s`` of speech (the fixed rule, for callers that want it)."""

    def __init__(self, *, silence_s: float = 2.0, min_speech_s: float = 0.25) -> None:
        if silence_s <= 0 or min_speech_s < 0:
            raise ValueError("silence_s must be positive and min_speech_s not negative")
        self.frame = WINDOW
        self.frame_s = WINDOW_S
        self._silence_frames = max(1, round(silence_s / WINDOW_S))
        self._min_speech_frames = max(1, round(min_speech_s / WINDOW_S))
        self._lock = threading.Lock()
        self._pending = np.zeros(0, dtype=np.float32)
        self._context = np.zeros(CONTEXT, dtype=np.float32)
        self._state = np.zeros((2, 1, 1, 128), dtype=np.float32)  # the network's (h, c)
        self.speech: list[bool] = []
        self.probabilities: list[float] = []
        self._frames = 0
        self._speech_frames = 0
        self._last_speech_frame = -1
        self._in_speech = False
        self.ended = False

    def feed(self, audio: np.ndarray) -> bool:
        """Take the next samples (float in [-1, 1] or int16); True once the fixed silence has passed."""
        with self._lock:  # two requests of one recording must not interleave the network's state
            self._pending = np.concatenate([self._pending, as_float(audio)])
            whole = len(self._pending) // WINDOW
            if whole:
                windows = self._pending[: whole * WINDOW].reshape(whole, WINDOW)
                self._pending = self._pending[whole * WINDOW :]
                for start in range(0, whole, BATCH):
                    for probability in self._run(windows[start : start + BATCH]):
                        self._step(float(probability))
            return self.ended

    def _run(self, windows: np.ndarray) -> np.ndarray:
        # Each window with the last samples before it, and the state carried through the batch.
        contexts = np.concatenate([self._context[None, :], windows[:-1, -CONTEXT:]])
        batch = np.concatenate([contexts, windows], axis=1)
        output, h, c = _session().run(None, {"input": batch, "h": self._state[0], "c": self._state[1]})
        self._state = np.stack([h, c])
        self._context = windows[-1, -CONTEXT:].copy()
        return np.asarray(output).reshape(-1)

    def _step(self, probability: float) -> None:
        self._in_speech = probability >= (RELEASE if self._in_speech else THRESHOLD)
        self.probabilities.append(probability)
        self.speech.append(self._in_speech)
        self._count(self._in_speech)
