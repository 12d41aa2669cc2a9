"""A study recruited on a panel, over HTTP: the panel's id comes in on the study's open link and stays
sealed; the interview's end and, separately, the retest's end send the person back to the panel with its
completion code (a local stand-in for the panel records the visits). The coordinator sees stages only."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from sqlalchemy import select, update

from agentbank.db.models import BatteryWave, InterviewInvitation, InterviewSession, Participant
from app.api.interviews.dependencies import get_services
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from interviewer.session import invitations
from interviewer.session.script import load_script, shorten
from tests.support.battery import answer_all
from tests.support.interviews import interviewer_model

CONSENT = {"recording": True, "use": True, "withdrawal": True}
SCRIPT = shorten(load_script(), modules=2, seconds=600)
PANEL_ID = "5f1e3a9c0d2b47e8a1c6PID"
ANSWER = "My grandmother kept bees behind the house."


@pytest.fixture
def panel():
    """A stand-in for the panel's completion endpoint: it records the completion codes it is brought."""
    seen: list[str] = []

    class Completion(BaseHTTPRequestHandler):
        def do_GET(self):
            seen.extend(parse_qs(urlsplit(self.path).query).get("cc", []))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"completed")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Completion)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()


@pytest.fixture
def interviewing(api, monkeypatch):
    services = Services(keys=api.bank.keys, chat=interviewer_model(), transcriber=FakeTranscriber())
    api.client.app.dependency_overrides[get_services] = lambda: services
    monkeypatch.setattr(invitations, "load_script", lambda: SCRIPT)
    yield services
    api.client.app.dependency_overrides.clear()


def test_the_panel_round_trip_id_in_completion_out(api, panel, interviewing):
    base, completed = panel
    coordinator = api.token("coordinator", "studies")
    expires = (datetime.now(UTC) + timedelta(days=30)).isoformat()
    created = api.client.post("/v1/studies", headers=coordinator, json={
        "name": "Panel pilot", "target_size": 1, "expires_at": expires, "panel": "prolific",
        "completion_url": f"{base}/complete?cc=INTERVIEW1", "retest_completion_url": f"{base}/complete?cc=RETEST2",
    })  # fmt: skip
    assert created.status_code == 201, created.text
    study_id = created.json()["id"]
    link = api.client.post(f"/v1/studies/{study_id}/open-link", headers=coordinator).json()["link"]
    # The panel appends its own id for the person to the link; the page sends it with the consent.
    query = parse_qs(urlsplit(f"{link}&PROLIFIC_PID={PANEL_ID}").query)
    assert query["id_param"] == ["PROLIFIC_PID"]
    body = {"invite": query["study"][0], "consent": CONSENT, "panel_ref": query["PROLIFIC_PID"][0]}
    started = api.client.post("/v1/interviews", json=body)
    assert started.status_code == 201, started.text
    me = {"Authorization": f"Bearer {started.json()['token']}"}
    # The study wanted one participant: the open link takes no second visitor.
    assert api.client.post("/v1/interviews", json={**body, "panel_ref": "another"}).status_code == 409

    state = started.json()["state"]
    while state["status"] == "active":
        state = api.client.post("/v1/interviews/current/answer", json={"text": ANSWER}, headers=me).json()
    finished = api.client.post("/v1/interviews/current/finish", json={"confirm": True}, headers=me).json()
    assert finished["completion_url"] == f"{base}/complete?cc=INTERVIEW1"
    assert httpx.get(finished["completion_url"]).status_code == 200 and completed == ["INTERVIEW1"]

    # The panel's id is sealed with the person's key: unreadable in the row, readable with their key.
    participant_id = api.session.scalars(select(InterviewSession.participant_id)).one()
    invitation = api.session.scalars(
        select(InterviewInvitation).where(InterviewInvitation.session_id.is_not(None))
    ).one()
    assert PANEL_ID.encode() not in invitation.panel_ref_encrypted
    person = api.session.get(Participant, participant_id)
    assert api.bank.keys.cipher(person.id, person.wrapped_key).open(invitation.panel_ref_encrypted) == PANEL_ID

    # The retest ends with the panel's second code, separately.
    portal = {"Authorization": f"Bearer {finished['access_code']}"}
    answer_all(api, portal, 1)
    first = api.client.post("/v1/participant/battery/complete", json={"wave": 1}, headers=portal).json()
    assert first["completion_url"] is None and first["reminder_offered"] is True
    contact = {"email": "bee.keeper@example.org"}
    assert api.client.put("/v1/participant/contact", json=contact, headers=portal).status_code == 204
    api.session.execute(
        update(BatteryWave).where(BatteryWave.wave == 2).values(due_at=datetime.now(UTC) - timedelta(days=1))
    )
    api.session.commit()
    due = api.client.get(f"/v1/studies/{study_id}/reminders", headers=coordinator)
    assert [(d["has_contact"], d["reminded_at"]) for d in due.json()] == [(True, None)]
    answer_all(api, portal, 2)
    retest = api.client.post("/v1/participant/battery/complete", json={"wave": 2}, headers=portal).json()
    assert retest["completion_url"] == f"{base}/complete?cc=RETEST2"
    assert httpx.get(retest["completion_url"]).status_code == 200 and completed == ["INTERVIEW1", "RETEST2"]

    # The coordinator sees the stage and counts: not the panel's id, a word, or the contact.
    status = api.client.get(f"/v1/studies/{study_id}", headers=coordinator)
    assert status.json()["counts"]["retest_done"] == 1
    exported = api.client.get(f"/v1/studies/{study_id}/export", headers=coordinator)
    for response in (status, due, exported):
        assert PANEL_ID not in response.text and "bees" not in response.text and "bee.keeper" not in response.text
