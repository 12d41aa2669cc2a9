"""A recording decoded as it arrives: each chunk's bytes are decoded once, not the whole turn again.

Browsers cut one WebM stream into timeslices; only the first carries the header, so a chunk cannot be
decoded alone. A ``StreamingDecoder`` keeps one demuxer open per recording, reading from a pipe that
waits for the next chunk, so the work per chunk is proportional to the chunk. Recordings in progress
are kept per process (``ChunkStreams``); a process that has not seen the start of a recording (after a
restart, or another server's) decodes what is stored once and carries on from there.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

import numpy as np

from interviewer.hearing.calls import Calls
from interviewer.hearing.transcription import SAMPLE_RATE, BadAudioError
from interviewer.hearing.turn_end import Listener

# How long a chunk may take to decode before the request gives up on it (it is stored either way).
FEED_TIMEOUT_S = 30.0
MAX_STREAMS = 64


class StreamingDecoder:
    """Decodes one recording (any container FFmpeg reads) fed in pieces, as float32 mono 16 kHz."""

    def __init__(self, *, max_seconds: float | None = None) -> None:
        self.max_seconds = max_seconds
        self._buffer = bytearray()
        self._closed = False
        self._starved = False  # the demuxer has read every byte fed and waits for more
        self._done = False
        self._cond = threading.Condition()
        self._pieces: list[np.ndarray] = []
        self.samples = 0
        self.error: BadAudioError | None = None
        self._thread = threading.Thread(target=self._run, name="audio-decoder", daemon=True)
        self._thread.start()

    def read(self, size: int = -1) -> bytes:
        """What FFmpeg reads: the bytes fed so far, waiting for more; b"" once closed."""
        with self._cond:
            while not self._buffer and not self._closed:
                self._starved = True
                self._cond.notify_all()
                self._cond.wait()
            self._starved = False
            size = len(self._buffer) if size < 0 else min(size, len(self._buffer))
            data = bytes(self._buffer[:size])
            del self._buffer[:size]
            return data

    def feed(self, data: bytes) -> np.ndarray:
        """Decode ``data`` (the next bytes of the recording); the samples it completed."""
        with self._cond:
            self._buffer.extend(data)
            self._starved = False
            self._cond.notify_all()
            # Decoded up to here once the demuxer has taken every byte and asks for more.
            ready = self._cond.wait_for(lambda: (self._starved and not self._buffer) or self._done, FEED_TIMEOUT_S)
            if not ready:
                raise BadAudioError("decoding the recording took too long")
            if self.error is not None:
                raise self.error
            new, self._pieces = self._pieces, []
        return np.concatenate(new) if new else np.zeros(0, dtype=np.float32)

    def close(self) -> None:
        """End the stream: the decoder thread finishes."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _append(self, samples: np.ndarray) -> None:
        with self._cond:
            self._pieces.append(np.clip(samples, -1.0, 1.0).astype(np.float32, copy=False))
            self.samples += len(samples)
            if self.max_seconds is not None and self.samples > self.max_seconds * SAMPLE_RATE:
                raise BadAudioError(f"the audio is longer than {self.max_seconds:g} seconds")

    def _run(self) -> None:
        import av

        resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
        try:
            with av.open(self, mode="r", metadata_errors="ignore") as container:
                if not container.streams.audio:
                    raise BadAudioError("the upload holds no audio track")
                for packet in container.demux(container.streams.audio[0]):
                    try:
                        frames = packet.decode()
                    except av.error.InvalidDataError:
                        continue  # as in decode_audio: one damaged packet is skipped
                    for frame in frames:
                        frame.pts = None
                        for out in resampler.resample(frame):
                            self._append(out.to_ndarray().reshape(-1))
        except BadAudioError as exc:
            self.error = exc
        except (av.FFmpegError, ValueError) as exc:
            self.error = BadAudioError(f"the audio could not be decoded ({type(exc).__name__})")
        finally:
            with self._cond:
                self._done = True
                self._cond.notify_all()


class Recording:
    """One recording being decoded: its decoder, the digests of the chunks fed, the audio so far.

    ``audio`` grows by doubling, so appending a chunk costs what the chunk holds; ``listener`` hears the end
    of the turn in the same new samples, ``calls`` are the model calls it has asked for on this audio.
    """

    def __init__(self, *, max_seconds: float | None = None) -> None:
        self.decoder = StreamingDecoder(max_seconds=max_seconds)
        self.digests: list[str] = []
        self._audio = np.zeros(SAMPLE_RATE, dtype=np.float32)
        self.length = 0  # samples decoded so far
        self.listener: Listener | None = None
        self.heard_for: Hashable = None  # what the listener was made for (the settings and the question's time)
        self.calls = Calls()  # the model calls on this audio, in flight

    @property
    def audio(self) -> np.ndarray:
        """The audio decoded so far (a view: valid until the next chunk)."""
        return self._audio[: self.length]

    def feed(self, digest: str, data: bytes) -> np.ndarray:
        """Decode the next chunk; the samples it completed."""
        new = self.decoder.feed(data)
        if self.length + len(new) > len(self._audio):
            grown = np.zeros(max(2 * len(self._audio), self.length + len(new)), dtype=np.float32)
            grown[: self.length] = self._audio[: self.length]
            self._audio = grown
        self._audio[self.length : self.length + len(new)] = new
        self.length += len(new)
        self.digests.append(digest)
        return new


class ChunkStreams:
    """The recordings being decoded in this process, by key (interview, turn, take)."""

    def __init__(self, limit: int = MAX_STREAMS) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._recordings: OrderedDict[Hashable, Recording] = OrderedDict()

    def recording(self, key: Hashable, digests: list[str], *, max_seconds: float | None = None) -> Recording:
        """The recording under ``key`` if it was fed a prefix of these chunks (in order), else a new one."""
        with self._lock:
            found = self._recordings.get(key)
            if found is not None and found.digests == digests[: len(found.digests)]:
                self._recordings.move_to_end(key)
                return found
            self._drop(key)  # other audio under this key (a chunk replaced): start from the first chunk
            made = Recording(max_seconds=max_seconds)
            self._recordings[key] = made
            while len(self._recordings) > self._limit:
                self._drop(next(iter(self._recordings)))
            return made

    def finish(self, key: Hashable, digests: list[str]) -> Recording | None:
        """The recording under ``key`` if it was fed exactly these chunks (else None), no longer kept: its
        turn is ending."""
        with self._lock:
            found = self._recordings.get(key)
            self._drop(key)
        return found if found is not None and found.digests == digests else None

    def forget(self, key: Hashable) -> None:
        """Stop decoding a recording (ended, replaced or discarded)."""
        with self._lock:
            self._drop(key)

    def _drop(self, key: Hashable) -> None:
        found = self._recordings.pop(key, None)
        if found is not None:
            found.decoder.close()
