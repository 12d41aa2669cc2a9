"""Shared helpers of the tests (moved from ``tests.app.web.test_interview_page``)."""

from __future__ import annotations

import hashlib
import io
import time
import wave

from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from agentbank.db.models import Participant
from agentbank.db.models.interviews import AudioChunk, InterviewSession
from agentbank.keys.crypto import KeyRing
from interviewer.hearing.recordings import stored_digest


def short_wav(seconds: float = 0.3, rate: int = 16_000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x00" * round(seconds * rate))
    return buffer.getvalue()


def token_from(page) -> str:
    """The interview token the page keeps in localStorage."""
    stored: dict[str, str] = page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")
    for key, value in stored.items():
        if "token" in key.lower():
            return value
    raise AssertionError(f"no token in localStorage: {sorted(stored)}")


def when_free(send, attempts: int = 20, pause_s: float = 0.3):
    """Make a request as the page does: a 409 interview_busy (another request of this interview, such as
    a chunk of the microphone's last take, still being stored) is tried again after a pause."""
    for _ in range(attempts):
        response = send()
        if response.status_code != 409 or response.json()["error"]["code"] != "interview_busy":
            return response
        time.sleep(pause_s)
    return response


WEBM = {"Content-Type": "audio/webm"}


CONSENT = {"recording": True, "use": True, "withdrawal": True}


# One sentence: its pauses (at commas) are shorter than the silence that ends even a finished thought, so
# its first chunks cannot end the turn whatever the transcriber makes of them.
SPOKEN = (
    "We moved to the coast when I was nine, and my father found work at the harbor, "
    "and my mother opened a small bakery near the church."
)


def stored_chunks(database_url: str, turn: int, keys: KeyRing) -> dict[int, bytes]:
    """The audio chunks of ``turn`` as the database holds them, decrypted with the participant's key."""
    engine = create_engine(database_url)
    try:
        with Session(engine) as session:
            interview = session.scalars(select(InterviewSession)).one()
            participant = session.get_one(Participant, interview.participant_id)
            cipher = keys.cipher(participant.id, participant.wrapped_key)
            rows = session.scalars(
                select(AudioChunk).where(AudioChunk.session_id == interview.id, AudioChunk.turn == turn)
            ).all()
            chunks = {}
            for row in rows:
                data = cipher.open_bytes(row.data_encrypted)
                # The stored digest is keyed under the participant's key: recompute it the same way.
                assert stored_digest(cipher, hashlib.sha256(data).hexdigest()) == row.sha256
                chunks[row.seq] = data
            return chunks
    finally:
        engine.dispose()
