"""A long answer in one-second chunks: each chunk's audio is decoded once, so the bytes the decoder
reads grow with the turn, not with its square; and the decoded audio is the same as a whole decode."""

from __future__ import annotations

import av
import numpy as np
import pytest

from interviewer.hearing.frames import StreamingDecoder
from interviewer.hearing.transcription import SAMPLE_RATE, decode_audio
from interviewer.session.transcripts import state_of
from tests.app.web.conftest import split_chunks, webm_opus
from tests.support.spoken_answers import SILENCE_S, begin, new_services, pitch, send

ANSWER_S = 60


class _Counted:
    """A file FFmpeg reads through, counting the bytes (read only: no seeking back to read again)."""

    def __init__(self, inner, counter: list[int]) -> None:
        self._inner, self._counter = inner, counter

    def read(self, size: int = -1) -> bytes:
        data = self._inner.read(size)
        self._counter[0] += len(data)
        return data


@pytest.fixture
def decoded_bytes(monkeypatch) -> list[int]:
    """How many encoded bytes every decoder in the process has read (one counter)."""
    counter = [0]
    real_open = av.open

    def counting_open(file, mode="r", *args, **kwargs):
        reading = mode == "r" and hasattr(file, "read")
        return real_open(_Counted(file, counter) if reading else file, mode, *args, **kwargs)

    monkeypatch.setattr(av, "open", counting_open)
    return counter


def long_answer() -> np.ndarray:
    """A minute of "speech": two-second phrases of tone between short pauses, then the closing silence."""
    rate, pieces = SAMPLE_RATE, []
    for n in range(ANSWER_S // 3):
        t = np.arange(2 * rate) / rate
        pieces += [(0.3 * np.sin(2 * np.pi * pitch(n % 40) * t)).astype(np.float32), np.zeros(rate, np.float32)]
    pieces.append(np.zeros(int((SILENCE_S + 1) * rate), np.float32))
    return np.concatenate(pieces)


def test_decoded_bytes_grow_linearly_with_the_answer(db, decoded_bytes):
    services = new_services()
    interview = begin(db, services)
    turn = state_of(db, services, interview).turn
    recording = webm_opus(long_answer())
    chunks = split_chunks(recording, ANSWER_S + 3)
    read_after: list[int] = []
    for seq, chunk in enumerate(chunks):
        send(db, services, interview, turn, [chunk], first_seq=seq)
        read_after.append(decoded_bytes[0])
    # Each chunk is read about once: the whole minute costs about its own size, where decoding the turn
    # so far on every chunk would read about half the chunk count times as much (30x here).
    assert decoded_bytes[0] <= 1.5 * len(recording), (decoded_bytes[0], len(recording))
    last_ten = read_after[-1] - read_after[-11]
    assert last_ten <= 1.5 * sum(len(c) for c in chunks[-10:])


def test_streamed_audio_is_the_whole_decode():
    recording = webm_opus(long_answer()[: 10 * SAMPLE_RATE])
    decoder = StreamingDecoder()
    pieces = [decoder.feed(chunk) for chunk in split_chunks(recording, 10)]
    decoder.close()
    streamed, whole = np.concatenate(pieces), decode_audio(recording)
    # The resampler holds back its last few milliseconds until the stream ends: all else is identical.
    assert 0 <= len(whole) - len(streamed) < SAMPLE_RATE // 50
    assert np.array_equal(streamed, whole[: len(streamed)])
