"""Speed of the interviewer's voice: Whisper on answers of 5, 20 and 60 seconds, Piper on a question.

Answers are synthesized with Piper (sentences repeated to reach the length) and resampled to 16 kHz
as an upload would be. Real-time factor is processing seconds per second of audio; time to first
audio is how long a participant waits before the question starts playing.

Run: python -m benchmarks.bench_speech   (the embedded models only; no database)
"""

from __future__ import annotations

import re
import statistics
import time

import jiwer
import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.common import save
from interviewer.hearing.transcription import SAMPLE_RATE, WhisperTranscriber, decode_audio
from interviewer.hearing.vad import EndOfTurnDetector
from interviewer.speaking.speech import PiperSpeaker

ANSWER = [
    "I grew up in a small town in southern Ohio, the youngest of four children.",
    "My father worked at the paper mill for thirty years, and my mother kept the house and the garden.",
    "We did not have much money, but there was always food on the table and music on Saturday nights.",
    "When I was seventeen I left for the city and found work in a hospital laundry.",
    "Looking back, I think those years taught me to save what I could and to trust my neighbors.",
]
QUESTION = (
    "Thank you for sharing that. I'd like to go back to something you mentioned earlier. "
    "What was it like to leave your hometown at seventeen, and who helped you when you arrived?"
)
LENGTHS_S = (5, 20, 60)
THREADS = 2
REPEATS = 3


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word error rate (jiwer) ignoring case and punctuation; an empty hypothesis of a reference is 1."""
    ref, hyp = (" ".join(re.findall(r"[a-z0-9']+", text.lower())) for text in (reference, hypothesis))
    if not ref:
        return float(bool(hyp))
    return float(jiwer.wer(ref, hyp)) if hyp else 1.0


def spoken_answer(speaker: PiperSpeaker, seconds: float) -> tuple[np.ndarray, str]:
    """Whole sentences of ANSWER, repeated in order, until about ``seconds`` of 16 kHz audio."""
    sentences = [(decode_audio(speaker.synthesize(s).wav), s) for s in ANSWER]
    pause = np.zeros(int(0.4 * SAMPLE_RATE), dtype=np.float32)
    audio: list[np.ndarray] = []
    said: list[str] = []
    index = 0
    while sum(len(a) for a in audio) < (seconds - 0.5) * SAMPLE_RATE:
        samples, text = sentences[index % len(sentences)]
        audio += [samples, pause]
        said.append(text)
        index += 1
    return np.concatenate(audio), " ".join(said)


def main() -> None:
    console = Console()
    figures: dict[str, float] = {}

    began = time.perf_counter()
    speaker = PiperSpeaker(threads=THREADS)
    figures["tts_load_s"] = time.perf_counter() - began
    began = time.perf_counter()
    transcriber = WhisperTranscriber(threads=THREADS)
    figures["stt_load_s"] = time.perf_counter() - began

    # Text to speech: a typical follow-up question, streamed sentence by sentence.
    list(speaker.stream(QUESTION))  # warm the phonemizer and the session
    first, total, audio_s = [], [], 0.0
    for _ in range(REPEATS):
        began = time.perf_counter()
        pieces = []
        for piece in speaker.stream(QUESTION):
            if not pieces:
                first.append(time.perf_counter() - began)
            pieces.append(piece)
        total.append(time.perf_counter() - began)
        audio_s = sum(p.duration_s for p in pieces)
    figures["tts_question_audio_s"] = audio_s
    figures["tts_first_audio_s"] = statistics.median(first)
    figures["tts_total_s"] = statistics.median(total)
    figures["tts_rtf"] = statistics.median(total) / audio_s

    # Speech to text on answers of increasing length.
    table = Table("answer", "audio s", "transcribe s", "RTF", "WER", "end-of-turn ms")
    warm_up = spoken_answer(speaker, 3)[0]
    transcriber.transcribe(warm_up)
    EndOfTurnDetector().feed(warm_up)
    for length in LENGTHS_S:
        audio, said = spoken_answer(speaker, length)
        runs = []
        for _ in range(REPEATS if length < 60 else 1):
            transcript = transcriber.transcribe(audio)
            runs.append(transcript.seconds)
        seconds = statistics.median(runs)
        duration = len(audio) / SAMPLE_RATE
        began = time.perf_counter()
        EndOfTurnDetector().feed(audio)
        vad_ms = (time.perf_counter() - began) * 1000
        wer = word_error_rate(said, transcript.text)
        figures[f"stt_{length}s_audio_s"] = duration
        figures[f"stt_{length}s_seconds"] = seconds
        figures[f"stt_{length}s_rtf"] = seconds / duration
        figures[f"stt_{length}s_wer"] = wer
        figures[f"vad_{length}s_ms"] = vad_ms
        table.add_row(
            f"{length} s",
            f"{duration:.1f}",
            f"{seconds:.2f}",
            f"{seconds / duration:.3f}",
            f"{wer:.3f}",
            f"{vad_ms:.0f}",
        )
    speaker.close()
    transcriber.close()

    console.print(table)
    for key, value in figures.items():
        if key.startswith(("tts_", "stt_load")):
            console.print(f"{key}: {value:.3f}")
    console.print(f"saved to {save('speech', figures)}")


if __name__ == "__main__":
    main()
