"""The server killed five times at random moments of a spoken interview (while a chunk arrives, while
the interviewer decides, while it speaks): each time it comes back where it was; no acknowledged
chunk or turn is lost, none is stored twice, and no answer is spliced from two recordings."""

from __future__ import annotations

import contextlib
import random
import threading
import time
from functools import partial

import httpx
import pytest

from tests.app.web.conftest import create_invitation, piper_speech, split_chunks, webm_opus
from tests.support.interview_pages import CONSENT, SPOKEN, WEBM, stored_chunks

pytestmark = pytest.mark.slow

# Which request is in flight when the server dies, answer by answer.
KILLS = [("chunk", 0), ("end", 0), ("speech", 1), ("chunk", 1), ("end", 2)]


def in_flight(server, send, rng: random.Random) -> httpx.Response | None:
    """Send a request and SIGKILL the server a random moment after; its response, if it came first."""
    result: list[httpx.Response | None] = [None]

    def run() -> None:
        with contextlib.suppress(httpx.TransportError):  # the connection died with the server
            result[0] = send()

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(rng.uniform(0.0, 0.08))
    server.kill()
    thread.join(timeout=60)
    return result[0]


def carry_on(client: httpx.Client) -> dict:
    """What the page does on return: where the interview stands, and a reply for an answer left without one."""
    state = client.get("/v1/interviews/current").json()
    if state["awaiting_reply"]:
        state = client.post("/v1/interviews/current/resume").json()
    return state


def test_five_kills_lose_nothing_and_splice_nothing(serve, fresh_database):
    rng = random.Random(16)
    server = serve()
    with server.client() as anonymous:
        token = anonymous.post(
            "/v1/interviews", json={"invite": create_invitation(fresh_database), "consent": CONSENT}
        ).json()["token"]
    chunks = split_chunks(webm_opus(piper_speech(SPOKEN)), 6)
    answered: dict[int, list[bytes]] = {}  # turn -> the chunks of the recording its answer came from

    for answer in range(3):
        kills = [kind for kind, at in KILLS if at == answer]
        while True:
            with server.client(token) as client:
                state = carry_on(client)
                turn = state["turn"]
                if "speech" in kills:
                    kills.remove("speech")
                    in_flight(server, partial(client.get, "/v1/interviews/current/speech", params={"part": 0}), rng)
                    server.start()
                    continue
                take = client.post(f"/v1/interviews/current/turns/{turn}/takes").json()["take"]
                acked: dict[int, bytes] = {}
                for seq, data in enumerate(chunks):
                    url = f"/v1/interviews/current/turns/{turn}/chunks/{seq}"
                    put = partial(client.put, url, params={"take": take}, content=data, headers=WEBM)
                    if "chunk" in kills and seq == 3:
                        kills.remove("chunk")
                        response = in_flight(server, put, rng)
                        if response is not None and response.status_code == 200:
                            acked[seq] = data
                        break
                    response = put()
                    assert response.status_code == 200, response.text
                    acked[seq] = data
                else:
                    end = partial(client.post, f"/v1/interviews/current/turns/{turn}/end", params={"take": take})
                    if "end" in kills:
                        kills.remove("end")
                        in_flight(server, end, rng)
                    else:
                        assert end().status_code == 200
                        answered[turn] = chunks
                        break
            # Killed: every chunk acknowledged before is stored, byte for byte.
            stored = stored_chunks(fresh_database, turn, server.keys())
            assert {seq: stored[seq] for seq in acked if seq in stored} == acked
            server.start()
            with server.client(token) as client:
                after = carry_on(client)
            if after["turn"] > turn:  # the answer was stored before the kill, and now has its reply
                answered[turn] = chunks
                break

    with server.client(token) as client:
        transcript = client.get("/v1/interviews/current/transcript").json()
    positions = [t["position"] for t in transcript]
    assert positions == list(range(1, len(transcript) + 1)), positions
    speakers = [t["speaker"] for t in transcript]
    assert speakers == ["interviewer", "participant"] * (len(transcript) // 2) + ["interviewer"] * (len(transcript) % 2)
    assert sorted(answered) == [t["position"] for t in transcript if t["speaker"] == "participant"]
    for turn, recording in answered.items():
        assert stored_chunks(fresh_database, turn, server.keys()) == dict(enumerate(recording)), f"turn {turn}"
