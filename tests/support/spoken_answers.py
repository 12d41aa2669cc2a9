"""Shared helpers of the tests (moved from ``tests.interviewer.hearing.test_partials``)."""

from __future__ import annotations

import struct
import time

import numpy as np

from agentbank.audit import log as audit
from agentbank.building.transcripts import load_turns
from interviewer.hearing.transcription import SAMPLE_RATE, FakeTranscriber
from interviewer.hearing.turn_end import Detector, TurnTaking
from interviewer.services import Services
from interviewer.session import interviews, invitations
from interviewer.session.script import load_script, shorten
from tests.support.factories import keyring
from tests.support.interviews import interviewer_model, receive

OPERATOR = audit.Actor("operator", "test")

WORD_S, GAP_S, PAUSE_S = 0.25, 0.1, 0.7  # a "word", the gap inside a sentence, the pause between
WORDS, SENTENCES = 5, 10


SCRIPT = shorten(load_script(), modules=3, seconds=600)


CONSENT = {"recording": True, "use": True, "withdrawal": True}


SILENCE_S = 2.0


# Tones are speech to the energy detector; the words are judged once a pause reaches 0.8 s (the pauses
# between sentences here are shorter) and the turn ends after 2 s, whatever they say.
TAKING = TurnTaking(pause_s=0.8, finished_s=SILENCE_S, unfinished_s=SILENCE_S, detector=Detector.ENERGY, sure_s=0.8)


def tone_speech() -> tuple[np.ndarray, list[str]]:
    """Sentences of tone "words", each at its own pitch, so a fake transcriber can tell them apart and
    a word cut in two would be heard twice; then the silence that ends the turn."""
    rate, pieces, said = SAMPLE_RATE, [np.zeros(int(0.5 * SAMPLE_RATE), np.float32)], []
    for sentence in range(SENTENCES):
        for word in range(WORDS):
            index = sentence * WORDS + word
            t = np.arange(int(WORD_S * rate)) / rate
            pieces.append((0.3 * np.sin(2 * np.pi * pitch(index) * t)).astype(np.float32))
            pieces.append(np.zeros(int((GAP_S if word < WORDS - 1 else PAUSE_S) * rate), np.float32))
            said.append(f"w{index}")
    pieces.append(np.zeros(int((SILENCE_S + 0.5) * rate), np.float32))
    return np.concatenate(pieces), said


def pitch(index: int) -> float:
    return 200.0 + 20.0 * index


def hear_tones(samples: np.ndarray) -> str:
    """The fake's ears: every burst of tone, named by its pitch, in order."""
    frame = 160
    count = len(samples) // frame
    loud = np.sqrt(np.mean(samples[: count * frame].reshape(count, frame) ** 2, axis=1)) > 0.05
    words, start = [], None
    for i, on in enumerate([*loud, False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            burst = samples[start * frame : i * frame]
            peak = np.argmax(np.abs(np.fft.rfft(burst, n=SAMPLE_RATE))) * 1.0
            words.append(f"w{round((peak - 200.0) / 20.0)}")
            start = None
    return " ".join(words)


def streaming_wav(samples: np.ndarray) -> bytes:
    """16-bit mono WAV as a streaming recorder writes it: lengths unknown, so any prefix decodes."""
    pcm = (np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, 1, SAMPLE_RATE, SAMPLE_RATE * 2, 2, 16)
    return (
        b"RIFF"
        + struct.pack("<I", 0xFFFFFFFF)
        + b"WAVEfmt "
        + struct.pack("<I", 16)
        + fmt
        + b"data"
        + (struct.pack("<I", 0xFFFFFFFF) + pcm)
    )


def pieces_of(data: bytes, seconds: float = 1.0) -> list[bytes]:
    size = int(seconds * SAMPLE_RATE * 2)
    return [data[i : i + size] for i in range(0, len(data), size)]


def new_services(name: str = "fake") -> Services:
    transcriber = FakeTranscriber(script=hear_tones, name=name)
    return Services(keys=keyring(), chat=interviewer_model(), transcriber=transcriber)


def begin(db, services, script=SCRIPT):
    code = invitations.create_invitation(db, OPERATOR)
    return invitations.start(db, services, code, CONSENT, script=script).interview


def send(db, services, interview, turn, chunks, first_seq=0, every_s: float = 0.0) -> bool:
    """Upload chunks as the API does (store, then check the end of the turn); whether it ended. ``every_s``:
    one chunk that often, as a page sends them while the person speaks (the models' answers come back
    beside the requests, and a request waits for them no longer than a frame)."""
    ended, start = False, time.monotonic()
    for n, (seq, chunk) in enumerate(enumerate(chunks, first_seq), 1):
        ended = receive(db, services, interview, turn, seq, chunk, taking=TAKING).end_of_turn
        db.commit()
        time.sleep(max(0.0, start + n * every_s - time.monotonic()))
    return ended


def answer_of(db, services, interview, turn) -> str:
    _, cipher = interviews.cipher_of(db, services, interview)
    return next(t.text for t in load_turns(db, interview.transcript_id, cipher) if t.position == turn)
