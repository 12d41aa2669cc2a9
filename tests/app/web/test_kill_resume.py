"""The server killed in the middle of a spoken answer: every acknowledged chunk and turn survives, and
the interview goes on at the same question on a new server process."""

from __future__ import annotations

import hashlib

import pytest

from tests.app.web.conftest import create_invitation, piper_speech, split_chunks, webm_opus
from tests.support.interview_pages import CONSENT, SPOKEN, WEBM, stored_chunks, when_free

pytestmark = pytest.mark.slow


def put_chunk(client, turn: int, seq: int, data: bytes):
    """PUT a chunk as the page does, tried again while the interview is busy."""
    path = f"/v1/interviews/current/turns/{turn}/chunks/{seq}"
    return when_free(lambda: client.put(path, content=data, headers=WEBM))


def where(state: dict) -> tuple:
    """What the participant sees: the turn to answer, the interviewer's last words, the scripted question."""
    return state["turn"], state["prompt"], state["question"]


def test_killed_server_keeps_every_acknowledged_chunk_and_resumes_at_the_same_question(serve, fresh_database):
    server = serve()
    code = create_invitation(fresh_database)
    with server.client() as anonymous:
        response = anonymous.post("/v1/interviews", json={"invite": code, "consent": CONSENT})
    assert response.status_code in (200, 201), response.text
    token = response.json()["token"]

    # One answer typed, then the next question is answered aloud and the server dies mid-sentence.
    with server.client(token) as client:
        first = client.get("/v1/interviews/current")
        assert first.status_code == 200, first.text
        response = client.post("/v1/interviews/current/answer", json={"text": "I was born in Ohio in 1961."})
        assert response.status_code == 200, response.text
        state = client.get("/v1/interviews/current").json()
        turn = state["turn"]
        assert turn > first.json()["turn"]
        transcript_before = client.get("/v1/interviews/current/transcript").json()
        before_kill = state

        chunks = split_chunks(webm_opus(piper_speech(SPOKEN)), 6)
        sent = chunks[:4]  # speech only, no trailing silence: the turn cannot have ended
        for seq, data in enumerate(sent):
            response = put_chunk(client, turn, seq, data)
            assert response.status_code == 200, response.text
            receipt = response.json()
            assert receipt["acknowledged"] is True
            assert (receipt["turn"], receipt["seq"]) == (turn, seq)
            assert receipt["sha256"] == hashlib.sha256(data).hexdigest()
            assert receipt["end_of_turn"] is False

    server.kill()
    # Byte for byte, every acknowledged chunk is in the database although no shutdown code ran.
    assert stored_chunks(fresh_database, turn, server.keys()) == dict(enumerate(sent))

    server.start()  # a new process on the same database
    with server.client(token) as client:
        state = client.get("/v1/interviews/current")
        assert state.status_code == 200, state.text
        assert where(state.json()) == where(before_kill)
        assert client.get("/v1/interviews/current/transcript").json() == transcript_before

        # Sending an acknowledged chunk again is harmless; the rest of the answer follows.
        again = put_chunk(client, turn, 3, sent[3])
        assert again.status_code == 200, again.text
        assert again.json()["sha256"] == hashlib.sha256(sent[3]).hexdigest()
        for seq in range(4, len(chunks)):
            response = put_chunk(client, turn, seq, chunks[seq])
            assert response.status_code == 200, response.text
            assert response.json()["acknowledged"] is True
        ended = client.post(f"/v1/interviews/current/turns/{turn}/end")
        assert ended.status_code == 200, ended.text
        after = client.get("/v1/interviews/current").json()
        assert after["turn"] > turn
        transcript = client.get("/v1/interviews/current/transcript").json()

    assert stored_chunks(fresh_database, turn, server.keys()) == dict(enumerate(chunks))
    assert transcript[: len(transcript_before)] == transcript_before
    assert "I was born in Ohio in 1961." in [t["text"] for t in transcript]
    answered = [t for t in transcript if t["position"] == turn]
    assert len(answered) == 1 and answered[0]["speaker"] == "participant" and answered[0]["text"]
    assert transcript[-1]["speaker"] == "interviewer" and transcript[-1]["position"] == turn + 1
