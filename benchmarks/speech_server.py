"""A local OpenAI-compatible speech server with a fixed latency and no limit of concurrency.

``POST /v1/audio/transcriptions`` answers every upload after ``--latency`` seconds with ``--text`` as one
segment spanning the uploaded WAV (``verbose_json``; ``json`` or ``text`` when asked; ``{"text": ...}``
alone with ``--plain``, as some servers answer). ``POST /v1/audio/speech`` answers after the same latency
with a quiet tone, 0.3 s a word of the input, as 16-bit mono WAV at 24 kHz, or as raw PCM (``pcm``) as
OpenAI sends it. ``GET /stats`` counts the calls of each kind, those answered and the peak in flight: a
capacity benchmark's ideal is computed from the calls made.

Run: python -m benchmarks.speech_server --port 8732 --latency 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import subprocess
import time
import wave

import numpy as np
import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from benchmarks.common import local_stats, start_local

TEXT = "I grew up near the sea."
SPEECH_RATE = 24_000
SECONDS_PER_WORD = 0.3


def wav_seconds(data: bytes) -> float:
    """The length of a WAV file's audio in seconds (0 for anything that is not WAV)."""
    try:
        with wave.open(io.BytesIO(data), "rb") as source:
            return source.getnframes() / source.getframerate()
    except (wave.Error, EOFError, ZeroDivisionError):
        return 0.0


def tone(words: int) -> np.ndarray:
    """A quiet 440 Hz tone, ``SECONDS_PER_WORD`` a word (at least one), as 16-bit samples."""
    t = np.arange(round(max(words, 1) * SECONDS_PER_WORD * SPEECH_RATE)) / SPEECH_RATE
    return (0.1 * np.sin(2 * np.pi * 440.0 * t) * 32767).astype("<i2")


def wav_of(samples: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(SPEECH_RATE)
        out.writeframes(samples.tobytes())
    return buffer.getvalue()


def make_app(latency_s: float, text: str = TEXT, *, plain: bool = False) -> Starlette:
    """The server's application: transcriptions, speech and the counts."""
    stats: dict[str, float] = {"calls": 0, "transcriptions": 0, "speeches": 0, "answered": 0, "refused": 0,
                               "in_flight": 0, "peak_in_flight": 0, "audio_s": 0.0, "first_call_at": 0.0,
                               "last_answer_at": 0.0}  # fmt: skip

    async def waited() -> None:
        stats["in_flight"] += 1
        stats["peak_in_flight"] = max(stats["peak_in_flight"], stats["in_flight"])
        try:
            await asyncio.sleep(latency_s)
        finally:
            stats["in_flight"] -= 1

    def called(kind: str) -> None:
        stats["calls"] += 1
        stats[kind] += 1
        stats["first_call_at"] = stats["first_call_at"] or time.time()  # wall clock: read by other processes

    def answered() -> None:
        stats["answered"] += 1
        stats["last_answer_at"] = time.time()

    async def transcriptions(request: Request) -> Response:
        called("transcriptions")
        form = await request.form()
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            stats["refused"] += 1
            return JSONResponse({"error": {"message": "no file in the form"}}, 400)
        duration = wav_seconds(await upload.read())
        stats["audio_s"] += duration
        await waited()
        answered()
        wanted = str(form.get("response_format") or "json")
        if wanted == "text":
            return PlainTextResponse(text)
        if plain or wanted != "verbose_json":
            return JSONResponse({"text": text})
        segment = {"id": 0, "seek": 0, "start": 0.0, "end": round(duration, 3), "text": f" {text}",
                   "tokens": [], "temperature": 0.0, "avg_logprob": -0.2, "compression_ratio": 1.0,
                   "no_speech_prob": 0.01}  # fmt: skip
        body = {"task": "transcribe", "language": "english", "duration": round(duration, 3), "text": text,
                "segments": [segment] if text else []}  # fmt: skip
        return JSONResponse(body)

    async def speech(request: Request) -> Response:
        called("speeches")
        body = json.loads(await request.body())
        wanted = body.get("response_format", "mp3")
        if wanted not in ("wav", "pcm"):
            stats["refused"] += 1
            return JSONResponse({"error": {"message": f"this server speaks wav and pcm, not {wanted}"}}, 400)
        samples = tone(len(str(body.get("input", "")).split()))
        await waited()
        answered()
        if wanted == "pcm":
            return Response(samples.tobytes(), media_type="audio/pcm")
        return Response(wav_of(samples), media_type="audio/wav")

    async def counts(_: Request) -> JSONResponse:
        return JSONResponse(stats)

    return Starlette(routes=[Route("/v1/audio/transcriptions", transcriptions, methods=["POST"]),
                             Route("/v1/audio/speech", speech, methods=["POST"]),
                             Route("/stats", counts)])  # fmt: skip


def start(port: int, latency: float, text: str = TEXT, *, plain: bool = False) -> subprocess.Popen[bytes]:
    """Run the server in a process of its own and return once it answers."""
    flags = ["--plain"] if plain else []
    return start_local("benchmarks.speech_server", port, "--latency", str(latency), "--text", text, *flags,
                       what="speech server")  # fmt: skip


def stats(port: int) -> dict[str, float]:
    """The server's counts: calls (transcriptions and speeches), answered, refused, in_flight, peak_in_flight,
    the seconds of audio uploaded; and the wall-clock times (``time.time()``) of its first call and last answer."""
    return local_stats(port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8732)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds every call takes")
    parser.add_argument("--text", default=TEXT, help="what every transcription hears")
    parser.add_argument("--plain", action="store_true", help='answer transcriptions with {"text": ...} alone')
    args = parser.parse_args()
    app = make_app(args.latency, args.text, plain=args.plain)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", backlog=4096)


if __name__ == "__main__":
    main()
