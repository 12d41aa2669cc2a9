"""The fake OpenAI-compatible speech server (``benchmarks.speech_server``) in a process of its own, on a free
loopback port, for the tests of remote recognition and speech."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from benchmarks import speech_server
from benchmarks.common import free_port


@dataclass(frozen=True)
class SpeechServer:
    """A running fake speech server: its base URL (``.../v1``), its port and the text it hears."""

    port: int
    text: str

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, float]:
        """The server's counts (``benchmarks.speech_server.stats``)."""
        return speech_server.stats(self.port)


@contextmanager
def running_speech_server(
    latency_s: float = 0.0, text: str = speech_server.TEXT, *, plain: bool = False
) -> Iterator[SpeechServer]:
    """The fake speech server, started and stopped around the block."""
    port = free_port()
    process = speech_server.start(port, latency_s, text, plain=plain)
    try:
        yield SpeechServer(port, text)
    finally:
        process.terminate()
        process.wait(timeout=10)
