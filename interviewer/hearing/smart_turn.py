"""Whether a voice sounds finished: Smart Turn v3.2, an end-of-turn model that hears the last eight seconds.

Words alone cannot tell "I moved to Chicago." said with a falling voice from the same words said on the
way to "...and I stayed ten years": Whisper writes the full stop either way. And hearing the words costs a
Whisper call (most of a second on two small cores). Smart Turn is a small Whisper encoder trained on
people finishing and pausing mid-thought (the words it hears, their pitch and pace, the silence after),
exported to ONNX for the CPU: about 0.12 s a call on one core of a small server. The bank runs it first at each pause
and ends the turn soon when the voice sounds finished (``turn_end``).

The model file comes inside the ``pipecat-ai`` wheel, installed without its dependencies by
``agentbank models install``; its input, Whisper's log-mel features of 80 bands over 8 s, is made with
faster-whisper's own feature extractor, which the bank already runs to transcribe.
"""

from __future__ import annotations

import functools
from typing import Any, Protocol

import numpy as np

from agentbank.core.errors import ProviderError
from agentbank.providers.model_packages import smart_turn_path
from interviewer.hearing.transcription import SAMPLE_RATE

WINDOW_S = 8  # the model hears the last 8 s, the start padded with silence when the recording is shorter
_WINDOW = WINDOW_S * SAMPLE_RATE
_NORMALIZE_EPS = 1e-7  # the waveform is scaled to zero mean and unit variance, as in training


class TurnModel(Protocol):
    """A model that hears whether the speech up to now sounds finished."""

    def probability(self, audio: np.ndarray) -> float:
        """How likely the turn is finished, given ``audio`` (16 kHz mono float32) up to now, in [0, 1]."""
        ...


@functools.lru_cache(maxsize=1)
def _model() -> tuple[Any, Any]:
    """The ONNX session and the feature extractor, loaded once per process (a session may be run from
    several threads at once)."""
    import onnxruntime as ort
    from faster_whisper.feature_extractor import FeatureExtractor

    options = ort.SessionOptions()
    # One thread: the transcription and the interviewer's decision running beside it need the cores more.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(smart_turn_path()), sess_options=options, providers=["CPUExecutionProvider"])
    return session, FeatureExtractor(feature_size=80, sampling_rate=SAMPLE_RATE, chunk_length=WINDOW_S)


def features(audio: np.ndarray) -> np.ndarray:
    """The model's input for ``audio``: its last 8 s (padded with silence before), normalized, as
    Whisper's log-mel spectrogram, 80 bands by 800 frames, with a batch dimension."""
    window = np.asarray(audio, dtype=np.float32)[-_WINDOW:]
    window = np.pad(window, (_WINDOW - len(window), 0))
    window = (window - window.mean()) / np.sqrt(window.var() + _NORMALIZE_EPS)
    _, extractor = _model()
    # padding=0: the window is exactly 8 s already, so the spectrogram has the model's 800 frames.
    return np.asarray(extractor(window.astype(np.float32), padding=0), dtype=np.float32)[None]


class SmartTurn:
    """Smart Turn v3.2 on the CPU."""

    def __init__(self) -> None:
        _model()  # load now: a missing package is a configuration error at start, not at the first pause

    def probability(self, audio: np.ndarray) -> float:
        session, _ = _model()
        try:
            output = session.run(None, {"input_features": features(audio)})
        except (RuntimeError, ValueError) as exc:  # onnxruntime's failures are RuntimeErrors
            raise ProviderError(f"the end-of-turn model failed ({type(exc).__name__})") from exc
        return float(np.asarray(output[0]).reshape(-1)[0])


class FakeTurnModel:
    """A turn model for tests: the probability ``hear`` gives for the audio (every call counted)."""

    def __init__(self, hear: float | Any = 1.0) -> None:
        self._hear = hear
        self.calls = 0

    def probability(self, audio: np.ndarray) -> float:
        self.calls += 1
        return float(self._hear(audio) if callable(self._hear) else self._hear)
