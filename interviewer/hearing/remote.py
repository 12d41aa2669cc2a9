"""Speech to timed text on a server: an OpenAI-compatible ``/audio/transcriptions`` endpoint (OpenAI, a
faster-whisper server such as speaches, vLLM), so that the process hearing an interview loads no Whisper.

The audio is sent as a 16-bit WAV made in memory, with the same prompt the embedded Whisper gets; the answer
is asked for as ``verbose_json`` for its timed segments, and a server that answers ``{"text": ...}`` alone gives
one segment spanning the audio. Failures become ``ProviderError`` under the bank's one retry policy
(``agentbank.providers.openai_compat``); no message carries the audio or the words heard.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

import httpx
import numpy as np

from agentbank.core.errors import ProviderError
from agentbank.providers.openai_compat import call_with_retries, openai_client
from interviewer.hearing.ports import Segment, Transcription
from interviewer.hearing.transcription import SAMPLE_RATE, VERBATIM_PROMPT, BadAudioError
from interviewer.speaking.speech import to_wav

WHAT = "the transcription endpoint"

logger = logging.getLogger(__name__)


def _segments(answer: dict[str, Any], duration: float) -> tuple[str, tuple[Segment, ...]]:
    """The text and timed segments of a ``verbose_json`` answer, or of a plain ``{"text": ...}`` one."""
    text = answer.get("text")
    if not isinstance(text, str):
        raise ProviderError(f"{WHAT} answered without a transcription", hint="check the base URL and the model")
    pieces = answer.get("segments")
    segments: list[Segment] = []
    if isinstance(pieces, list):
        try:
            segments = [Segment(float(p["start"]), float(p["end"]), str(p["text"]).strip()) for p in pieces]
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError(f"{WHAT} answered segments without times or text") from exc
        segments = [s for s in segments if s.text]
    elif text.strip():
        segments = [Segment(0.0, duration, text.strip())]
    return (" ".join(s.text for s in segments) if segments else text.strip()), tuple(segments)


class OpenAITranscriber:
    """An OpenAI-compatible ``/audio/transcriptions`` endpoint, sent WAV, asked in English."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = model
        self._client = openai_client(base_url, api_key, timeout_s, http_client)
        self._max_retries, self._sleep = max_retries, sleep

    def transcribe(self, audio: np.ndarray, *, context: str | None = None) -> Transcription:
        """The words in ``audio`` (float32 or int16 mono 16 kHz), with the segments the endpoint timed."""
        samples = np.asarray(audio)
        if samples.ndim != 1:
            raise BadAudioError(f"expected mono audio as one dimension, got shape {samples.shape}")
        duration = len(samples) / SAMPLE_RATE
        if len(samples) == 0:
            return Transcription(text="", duration_s=0.0, model=self.name)
        wav = to_wav(samples, SAMPLE_RATE).wav
        began = time.perf_counter()
        response = call_with_retries(
            lambda: self._client.audio.transcriptions.with_raw_response.create(
                file=("answer.wav", wav, "audio/wav"),
                model=self.name,
                language="en",
                # As the embedded Whisper is prompted: the question, then fillers, so that fillers are written.
                prompt=f"{context} {VERBATIM_PROMPT}" if context else VERBATIM_PROMPT,
                response_format="verbose_json",
            ),
            what=WHAT,
            max_retries=self._max_retries,
            backoff_s=0.5,
            sleep=self._sleep,
        )
        try:
            answer = json.loads(response.content)
        except ValueError as exc:
            raise ProviderError(f"{WHAT} did not answer JSON", hint="check the base URL") from exc
        if not isinstance(answer, dict):
            raise ProviderError(f"{WHAT} did not answer a JSON object", hint="check the base URL")
        text, segments = _segments(answer, duration)
        seconds = time.perf_counter() - began
        logger.info("transcribed %.1f s of audio remotely in %.2f s", duration, seconds)
        return Transcription(text=text, segments=segments, duration_s=duration, model=self.name, seconds=seconds)

    def close(self) -> None:
        self._client.close()
