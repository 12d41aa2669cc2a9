"""A new recording of an answer replaces the old one explicitly; a closed connection is a normal event."""

from __future__ import annotations

import logging

import anyio
import pytest

from agentbank.audit import log as audit
from agentbank.keys.crypto import KeyRing
from agentbank.providers.fakes import ScriptedChatModel
from app.api.interviews.dependencies import get_services
from interviewer.deciding import notes
from interviewer.hearing.transcription import SAMPLE_RATE, FakeTranscriber
from interviewer.services import Services
from interviewer.session import invitations
from interviewer.session.script import load_script
from tests.support.interviews import begin_over_api, interviewer_model, wav_bytes

CONSENT = {"recording": True, "use": True, "withdrawal": True}
CHUNK = "/v1/interviews/current/turns/{turn}/chunks/{seq}"


@pytest.fixture
def started(api, monkeypatch):
    # The fake "hears" how long the recording is, so a spliced answer shows in its text.
    transcriber = FakeTranscriber(script=lambda samples: f"{len(samples) / SAMPLE_RATE:.1f} seconds")
    services = Services(keys=api.bank.keys, chat=interviewer_model(), transcriber=transcriber)
    yield begin_over_api(api, monkeypatch, services)
    api.client.app.dependency_overrides.clear()


def test_a_new_take_replaces_the_old_recording(api, started):
    headers, state = started
    turn, wav = state["turn"], {**headers, "Content-Type": "audio/wav"}
    first = api.client.post(f"/v1/interviews/current/turns/{turn}/takes", headers=headers)
    assert first.status_code == 201, first.text
    old_take = first.json()["take"]
    old = wav_bytes(6.0)
    for seq, piece in enumerate([old[:40_000], old[40_000:80_000]]):
        put = api.client.put(CHUNK.format(turn=turn, seq=seq), params={"take": old_take}, content=piece, headers=wav)
        assert put.status_code == 200, put.text
    # The page reloads mid-answer and records the answer again.
    second = api.client.post(f"/v1/interviews/current/turns/{turn}/takes", headers=headers)
    new_take = second.json()["take"]
    assert new_take != old_take
    new = wav_bytes(4.0)
    put = api.client.put(CHUNK.format(turn=turn, seq=0), params={"take": new_take}, content=new, headers=wav)
    assert put.status_code == 200, put.text
    # A chunk of the old recording still in flight is refused, not spliced onto the new one.
    late = api.client.put(CHUNK.format(turn=turn, seq=1), params={"take": old_take}, content=old[40_000:], headers=wav)
    assert late.status_code == 409 and late.json()["error"]["code"] == "recording_replaced"
    stale_end = api.client.post(f"/v1/interviews/current/turns/{turn}/end", params={"take": old_take}, headers=headers)
    assert stale_end.status_code == 409
    ended = api.client.post(f"/v1/interviews/current/turns/{turn}/end", params={"take": new_take}, headers=headers)
    assert ended.status_code == 200, ended.text
    answers = [t for t in api.client.get("/v1/interviews/current/transcript", headers=headers).json()]
    assert [t["text"] for t in answers if t["speaker"] == "participant"] == ["4.0 seconds"]


def test_a_closed_connection_mid_upload_is_a_normal_event(api, started, caplog):
    headers, state = started
    app = api.client.app
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "PUT",
        "scheme": "http",
        "path": f"/v1/interviews/current/turns/{state['turn']}/chunks/0",
        "raw_path": b"",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"localhost"),
            (b"authorization", headers["Authorization"].encode()),
            (b"content-type", b"audio/wav"),
            (b"content-length", b"100000"),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("localhost", 80),
        "state": {},
    }
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.disconnect"}  # the page was reloaded before the chunk's bytes came

    async def send(message: dict) -> None:
        sent.append(message)

    with caplog.at_level(logging.INFO):
        anyio.run(app, scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    assert start["status"] == 400
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text
    assert api.client.get("/v1/interviews/current", headers=headers).json()["turn"] == state["turn"]


def test_the_opening_is_spoken_sentence_by_sentence_from_the_cache(api, started):
    headers, _ = started
    first = api.client.get("/v1/interviews/current/speech", params={"part": 0}, headers=headers)
    assert first.status_code == 200 and first.content[:4] == b"RIFF"
    parts = int(first.headers["X-Speech-Parts"])
    assert parts > 5  # the opening's first sentence plays while the rest is still to come
    whole = api.client.get("/v1/interviews/current/speech", headers=headers)
    assert len(whole.content) > parts * (len(first.content) - 44) // 4
    beyond = api.client.get("/v1/interviews/current/speech", params={"part": parts}, headers=headers)
    assert beyond.status_code == 404
    cache = api.client.app.state.interview_providers.speech_cache
    hits = cache.hits
    again = api.client.get("/v1/interviews/current/speech", params={"part": 0}, headers=headers)
    assert again.content == first.content and cache.hits == hits + 1


def test_the_short_version_and_a_transcript_grouped_by_module(api, monkeypatch):
    services = Services(keys=api.bank.keys, chat=interviewer_model(follow_ups=0), transcriber=FakeTranscriber())
    api.client.app.dependency_overrides[get_services] = lambda: services
    code = invitations.create_invitation(api.session, audit.Actor("operator", "test"))
    api.session.commit()
    started = api.client.post("/v1/interviews", json={"invite": code, "consent": CONSENT, "length": "short"})
    assert started.status_code == 201, started.text
    headers = {"Authorization": f"Bearer {started.json()['token']}"}
    assert started.json()["state"]["total"] == len(load_script().modules)  # one question per module
    for answer in ["I grew up by the sea.", "My sister and my mother."]:
        assert (
            api.client.post("/v1/interviews/current/answer", json={"text": answer}, headers=headers).status_code == 200
        )
    turns = api.client.get("/v1/interviews/current/transcript", headers=headers).json()
    titles = [module.title for module in load_script().modules]
    assert [t["module_title"] for t in turns] == [titles[0], titles[0], titles[1], titles[1], titles[2]]
    api.client.app.dependency_overrides.clear()


def test_an_acknowledgement_is_ready_at_once(api, started):
    headers, _ = started
    cache = api.client.app.state.interview_providers.speech_cache
    first = api.client.get("/v1/interviews/current/speech/acknowledgement", headers=headers)
    assert first.status_code == 200 and first.content[:4] == b"RIFF"
    hits = cache.hits
    again = api.client.get("/v1/interviews/current/speech/acknowledgement", headers=headers)
    assert again.content == first.content and cache.hits == hits + 1  # rendered once, then from the cache
    assert api.client.get("/v1/interviews/current/speech/acknowledgement").status_code == 401


class ServerDiedError(Exception):
    """Stands for the server process ending while the interviewer's model decides."""


def test_an_answer_left_without_its_reply_is_answered_on_return(api, started, monkeypatch):
    headers, state = started
    services = api.client.app.dependency_overrides[get_services]()
    model = services.chat

    def dies_while_deciding(messages, schema):
        raise ServerDiedError

    services.chat = ScriptedChatModel(dies_while_deciding)
    with pytest.raises(ServerDiedError):
        api.client.post(
            "/v1/interviews/current/answer", json={"text": "We lived above my father's shop."}, headers=headers
        )
    services.chat = model
    waiting = api.client.get("/v1/interviews/current", headers=headers).json()
    assert waiting["awaiting_reply"] is True and waiting["prompt"] == state["prompt"]
    # Another answer is refused until then: stored after the first, it would leave that one without a reply.
    again = api.client.post("/v1/interviews/current/answer", json={"text": "Anything else."}, headers=headers)
    assert again.status_code == 409 and again.json()["error"]["code"] == "reply_pending"
    unwraps, unwrap = [], KeyRing.data_key
    monkeypatch.setattr(KeyRing, "data_key", lambda keys, *args: unwraps.append(args) or unwrap(keys, *args))
    # The notes that follow the reply read the key on their own, once the response has gone.
    after: list[object] = []
    monkeypatch.setattr(notes, "after_reply", lambda *args: after.append(args))
    resumed = api.client.post("/v1/interviews/current/resume", headers=headers).json()
    assert resumed["awaiting_reply"] is False and resumed["turn"] == state["turn"] + 2
    assert len(unwraps) == 1  # the reply decided on return, with the participant's key unwrapped once
    assert len(after) == 1
    turns = api.client.get("/v1/interviews/current/transcript", headers=headers).json()
    assert [t["speaker"] for t in turns] == ["interviewer", "participant", "interviewer"]
    assert turns[1]["text"] == "We lived above my father's shop."
