"""The interview over HTTP: invitation, consent, typed and spoken answers, review, the access code."""

import sys
from collections import Counter

import pytest
from sqlalchemy import select, text

from agentbank.audit import log as audit
from agentbank.building import transcripts
from agentbank.db.models import InterviewSession, Transcript
from agentbank.keys.crypto import KeyRing
from app.api.interviews.dependencies import get_services
from interviewer.deciding import notes
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from interviewer.session import invitations
from interviewer.session.script import load_script, shorten
from tests.support.interviews import interviewer_model, wav_bytes

CONSENT = {"recording": True, "use": True, "withdrawal": True}
SCRIPT = shorten(load_script(), modules=2, seconds=600)


@pytest.fixture
def settings(settings):
    # The chunks here speak in tones, which only the energy detector hears as speech (and no voice model
    # could hear as a voice finishing or not).
    return settings.model_copy(update={"voice_detector": "energy", "end_of_turn_voice": "none"})


@pytest.fixture
def started(api, monkeypatch):
    services = Services(keys=api.bank.keys, chat=interviewer_model(), transcriber=FakeTranscriber())
    api.client.app.dependency_overrides[get_services] = lambda: services
    monkeypatch.setattr(invitations, "load_script", lambda: SCRIPT)
    code = invitations.create_invitation(api.session, audit.Actor("operator", "test"))
    api.session.commit()
    response = api.client.post("/v1/interviews", json={"invite": code, "consent": CONSENT})
    assert response.status_code == 201, response.text
    body = response.json()
    yield {"Authorization": f"Bearer {body['token']}"}, body["state"], code
    api.client.app.dependency_overrides.clear()


def test_the_page_is_public_and_self_contained(api):
    page = api.client.get("/interview")
    assert page.status_code == 200 and "getUserMedia" in page.text and "MediaRecorder" in page.text
    assert "http://" not in page.text and "https://" not in page.text


def test_consent_and_invitation_are_checked(api, started):
    _, _, code = started
    again = api.client.post("/v1/interviews", json={"invite": code, "consent": CONSENT})
    assert again.status_code == 403 and again.json()["error"]["code"] == "invalid_invitation"
    refused = api.client.post("/v1/interviews", json={"invite": "x" * 20, "consent": {**CONSENT, "use": False}})
    assert refused.status_code == 422


def test_the_start_and_a_resume_warm_the_next_decision_after_they_reply(api, monkeypatch):
    """The opening and a resume's reply are replies too: what follows a reply (the notes, then the next
    decision's prompt read into the model's cache) follows them, so a first answer is not decided cold."""
    services = Services(keys=api.bank.keys, chat=interviewer_model(), transcriber=FakeTranscriber())
    api.client.app.dependency_overrides[get_services] = lambda: services
    monkeypatch.setattr(invitations, "load_script", lambda: SCRIPT)
    after: list[object] = []
    monkeypatch.setattr(notes, "after_reply", lambda transactions, services, participant: after.append(participant))
    code = invitations.create_invitation(api.session, audit.Actor("operator", "test"))
    api.session.commit()
    try:
        response = api.client.post("/v1/interviews", json={"invite": code, "consent": CONSENT})
        assert response.status_code == 201, response.text
        headers = {"Authorization": f"Bearer {response.json()['token']}"}
        participant = api.session.scalars(select(InterviewSession.participant_id)).one()
        assert after == [participant]
        assert api.client.post("/v1/interviews/current/pause", headers=headers).status_code == 200
        assert after == [participant]
        assert api.client.post("/v1/interviews/current/resume", headers=headers).status_code == 200
        assert after == [participant, participant]
    finally:
        api.client.app.dependency_overrides.clear()


def test_typed_interview_end_to_end(api, started):
    headers, state, _ = started
    assert state["status"] == "active" and state["question"] == SCRIPT.modules[0].questions[0].text
    assert api.client.get("/v1/interviews/current/speech", headers=headers).headers["content-type"] == "audio/wav"
    assert api.client.post("/v1/interviews/current/pause", headers=headers).json()["status"] == "paused"
    assert api.client.post("/v1/interviews/current/answer", json={"text": "x"}, headers=headers).status_code == 409
    assert api.client.post("/v1/interviews/current/resume", headers=headers).json()["status"] == "active"
    n = 0
    while state["status"] == "active":
        response = api.client.post("/v1/interviews/current/answer", json={"text": f"Answer {n}."}, headers=headers)
        assert response.status_code == 200, response.text
        state, n = response.json(), n + 1
    assert state["status"] == "review" and n == 4
    turns = api.client.get("/v1/interviews/current/transcript", headers=headers).json()
    first_module = SCRIPT.modules[0].title
    assert turns[1] == {"position": 2, "speaker": "participant", "text": "Answer 0.", "module_title": first_module}
    refused = api.client.post("/v1/interviews/current/finish", json={"confirm": False}, headers=headers)
    assert refused.status_code == 422
    finished = api.client.post(
        "/v1/interviews/current/finish", json={"redactions": [{"position": 4}], "confirm": True}, headers=headers
    )
    assert finished.status_code == 200, finished.text
    portal = {"Authorization": f"Bearer {finished.json()['access_code']}"}
    me = api.client.get("/v1/participant/me", headers=portal)
    assert me.status_code == 200 and me.json()["consent"] == "consented"
    interview = api.session.scalars(select(InterviewSession).order_by(InterviewSession.created_at.desc())).first()
    assert interview.status == "finished" and api.session.get(Transcript, interview.transcript_id).status == "final"
    queued = (
        api.session.execute(text("SELECT args FROM procrastinate_jobs WHERE task_name = 'agentbank.build_agent'"))
        .scalars()
        .all()
    )
    assert {"participant_id": str(interview.participant_id), "population": {}} in queued
    final = api.client.get("/v1/interviews/current/transcript", headers=portal).json()
    assert final[3]["text"] == "[redacted]"
    # The interview's token ends with the interview: only the access code signs in from now on.
    for method, url in [("GET", "/v1/participant/me"), ("GET", "/v1/participant/transcript"),
                        ("POST", "/v1/participant/withdraw")]:  # fmt: skip
        body = {"confirm": True} if method == "POST" else None
        assert api.client.request(method, url, json=body, headers=headers).status_code == 401, url


def test_spoken_answer_in_chunks(api, started):
    headers, state, _ = started
    # The last piece holds 3+ s of silence, longer than any wait: the turn ends in it even when the words of
    # its pause come back late (a busy worker) and it waits as for an unfinished thought.
    audio = wav_bytes(5.0)
    pieces = [audio[:20_000], audio[20_000:60_000], audio[60_000:]]
    url = "/v1/interviews/current/turns/{turn}/chunks/{seq}"
    wav = {**headers, "Content-Type": "audio/wav"}
    bad = api.client.put(url.format(turn=state["turn"], seq=0), content=b"garbage bytes", headers=wav)
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "bad_audio"
    assert api.client.get("/v1/interviews/current", headers=headers).json() == state
    acks = []
    for seq, piece in enumerate(pieces):
        response = api.client.put(url.format(turn=state["turn"], seq=seq), content=piece, headers=wav)
        assert response.status_code == 200, response.text
        acks.append(response.json())
    assert all(a["acknowledged"] for a in acks) and acks[-1]["end_of_turn"] and not acks[0]["end_of_turn"]
    duplicate = api.client.put(url.format(turn=state["turn"], seq=1), content=pieces[1], headers=wav)
    assert duplicate.status_code == 200 and duplicate.json()["sha256"] == acks[1]["sha256"]
    clash = api.client.put(url.format(turn=state["turn"], seq=1), content=pieces[2], headers=wav)
    assert clash.status_code == 409
    text_type = api.client.put(
        url.format(turn=state["turn"], seq=3), content=b"x", headers={**headers, "Content-Type": "text/plain"}
    )
    assert text_type.status_code == 415
    ended = api.client.post(f"/v1/interviews/current/turns/{state['turn']}/end", headers=headers)
    assert ended.status_code == 200, ended.text
    assert ended.json()["turn"] == state["turn"] + 2
    turns = api.client.get("/v1/interviews/current/transcript", headers=headers).json()
    assert turns[1]["text"] == "This is a test answer."


def test_a_large_chunk_passes_the_body_limit(api, started):
    headers, state, _ = started
    big = wav_bytes(5.0)  # 160 kB: over the JSON body limit, under the audio chunk limit
    response = api.client.put(
        f"/v1/interviews/current/turns/{state['turn']}/chunks/0",
        content=big,
        headers={**headers, "Content-Type": "audio/wav"},
    )
    assert response.status_code == 200, response.text


def test_a_turn_unwraps_the_key_and_decrypts_the_transcript_once(api, started, monkeypatch):
    """An answer's request, typed or spoken, loads the participant's key and transcript once (the notes that
    follow the reply read them on their own, off the request); so do a pause and a resume; a chunk of a spoken
    answer unwraps the key once, and a discarded recording unwraps nothing."""
    headers, state, _ = started
    monkeypatch.setattr(notes, "after_reply", lambda *args: None)
    counts: Counter[str] = Counter()
    unwrap, decrypt = KeyRing.data_key, transcripts.load_turns

    def unwrapping(self, *args):
        counts["key unwrapped"] += 1
        return unwrap(self, *args)

    def decrypting(*args):
        counts["transcript decrypted"] += 1
        return decrypt(*args)

    monkeypatch.setattr(KeyRing, "data_key", unwrapping)
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("interviewer", "app") and hasattr(module, "load_turns"):
            monkeypatch.setattr(module, "load_turns", decrypting)
    typed = api.client.post("/v1/interviews/current/answer", json={"text": "By the sea."}, headers=headers)
    assert typed.status_code == 200, typed.text
    assert counts == {"key unwrapped": 1, "transcript decrypted": 1}
    turn, wav = typed.json()["turn"], {**headers, "Content-Type": "audio/wav"}
    # A chunk is stored, listened to and transcribed ahead under one unwrap (it was three); a finished thought
    # at its pause reads the transcript once to start the decision ahead.
    counts.clear()
    put = api.client.put(f"/v1/interviews/current/turns/{turn}/chunks/0", content=wav_bytes(4.0), headers=wav)
    assert put.status_code == 200, put.text
    assert counts["key unwrapped"] == 1 and counts["transcript decrypted"] <= 1, counts
    counts.clear()
    spoken = api.client.post(f"/v1/interviews/current/turns/{turn}/end", headers=headers)
    assert spoken.status_code == 200 and spoken.json()["turn"] == turn + 2, spoken.text
    assert counts == {"key unwrapped": 1, "transcript decrypted": 1}
    # Pausing and resuming show where the interview stands: the key and the transcript, once each.
    for action, status in (("pause", "paused"), ("resume", "active")):
        counts.clear()
        changed = api.client.post(f"/v1/interviews/current/{action}", headers=headers)
        assert changed.status_code == 200 and changed.json()["status"] == status, changed.text
        assert counts == {"key unwrapped": 1, "transcript decrypted": 1}, action
    # Throwing a recording away reads none of the participant's data: their key stays wrapped.
    turn += 2
    put = api.client.put(f"/v1/interviews/current/turns/{turn}/chunks/0", content=wav_bytes(1.0), headers=wav)
    assert put.status_code == 200, put.text
    counts.clear()
    discarded = api.client.delete(f"/v1/interviews/current/turns/{turn}/chunks", headers=headers)
    assert discarded.status_code == 200 and discarded.json()["discarded"] == 1, discarded.text
    assert not counts
