"""A panel study over HTTP with each participant's own completion code, and the panel's returned and timed-out
submissions recorded: the codes come back in the completion URLs and in the coordinator's list (only the
study's coordinator's), the outcomes in the funnel's counts, never a panel id; malformed bodies are 4xx in
the API's error format, never a 500."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from app.api.interviews.dependencies import get_services
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from interviewer.session import invitations
from interviewer.session.script import load_script, shorten
from tests.support.interviews import interviewer_model

CONSENT = {"recording": True, "use": True, "withdrawal": True}
SCRIPT = shorten(load_script(), modules=2, seconds=600)
COMPLETE = "https://app.prolific.com/submissions/complete?cc={code}"
EXPIRES = (datetime.now(UTC) + timedelta(days=30)).isoformat()
MISSING = "00000000-0000-4000-8000-000000000000"


@pytest.fixture
def interviewing(api, monkeypatch):
    services = Services(keys=api.bank.keys, chat=interviewer_model(), transcriber=FakeTranscriber())
    api.client.app.dependency_overrides[get_services] = lambda: services
    monkeypatch.setattr(invitations, "load_script", lambda: SCRIPT)
    yield services
    api.client.app.dependency_overrides.clear()


@pytest.fixture
def coordinator(api):
    return api.token("coordinator", "studies")


def new_study(api, headers, **settings) -> str:
    body = {"name": "Own codes", "target_size": 5, "expires_at": EXPIRES, "panel": "prolific", **settings}
    created = api.client.post("/v1/studies", headers=headers, json=body)
    assert created.status_code == 201, created.text
    return created.json()["id"]


def visit(api, link: str, panel_id: str) -> dict[str, str]:
    """A panel's visitor on the study's link: consented, interviewing; their token's headers."""
    query = parse_qs(urlsplit(f"{link}&PROLIFIC_PID={panel_id}").query)
    body = {"invite": query["study"][0], "consent": CONSENT, "panel_ref": query["PROLIFIC_PID"][0]}
    started = api.client.post("/v1/interviews", json=body)
    assert started.status_code == 201, started.text
    return {"Authorization": f"Bearer {started.json()['token']}"}


def finish(api, me: dict[str, str]) -> str:
    """Answer to the end and confirm; the completion URL the finished page offers."""
    state = api.client.get("/v1/interviews/current", headers=me).json()
    while state["status"] == "active":
        state = api.client.post("/v1/interviews/current/answer", json={"text": "We kept bees."}, headers=me).json()
    finished = api.client.post("/v1/interviews/current/finish", json={"confirm": True}, headers=me)
    assert finished.status_code == 200, finished.text
    return finished.json()["completion_url"]


def test_own_codes_reach_the_panel_and_the_coordinators_list_and_outcomes_reach_the_funnel(
    api, interviewing, coordinator
):
    study = new_study(api, coordinator, completion_url=COMPLETE, completion_codes="per_participant")
    assert api.client.get("/v1/studies", headers=coordinator).json()[0]["completion_codes"] == "per_participant"
    link = api.client.post(f"/v1/studies/{study}/open-link", headers=coordinator).json()["link"]
    panel_ids = ["5f00000000000000000000a1", "5f00000000000000000000a2", "5f00000000000000000000a3"]
    visitors = [visit(api, link, panel_id) for panel_id in panel_ids]
    urls = [finish(api, me) for me in visitors[:2]]  # the third gives up on the panel
    codes = [re.fullmatch(r"https://app\.prolific\.com/submissions/complete\?cc=([0-9A-Z]{10})", u)[1] for u in urls]
    assert len(set(codes)) == 2

    listed = api.client.get(f"/v1/studies/{study}/completion-codes", headers=coordinator)
    assert listed.status_code == 200, listed.text
    assert sorted(listed.json(), key=lambda c: c["code"]) == [{"ending": "interview", "code": c} for c in sorted(codes)]
    assert api.client.get(f"/v1/studies/{study}/completion-codes", headers=coordinator).json() == listed.json()
    # Another coordinator finds no such study: the same answer as for one that does not exist.
    other = api.token("coordinator_b", "studies")
    refused = api.client.get(f"/v1/studies/{study}/completion-codes", headers=other)
    missing = api.client.get(f"/v1/studies/{MISSING}/completion-codes", headers=other)
    assert refused.status_code == 404 and refused.json() == missing.json()
    assert api.client.post(f"/v1/studies/{study}/outcomes", headers=other, json={"outcomes": []}).status_code == 404

    reported = {"outcomes": [{"panel_participant_id": panel_ids[2], "outcome": "returned"},
                             {"panel_participant_id": "5f000000000000000000ffff", "outcome": "timed_out"}]}  # fmt: skip
    recorded = api.client.post(f"/v1/studies/{study}/outcomes", headers=coordinator, json=reported)
    assert recorded.status_code == 200, recorded.text
    assert recorded.json() == {"recorded": 1, "unchanged": 0, "refused": 0, "unmatched": 1}
    status = api.client.get(f"/v1/studies/{study}", headers=coordinator)
    assert status.json()["outcomes"] == {"timed_out": 0, "returned": 1}
    exported = api.client.get(f"/v1/studies/{study}/export", headers=coordinator)
    for response in (listed, recorded, status, exported):
        assert not any(panel_id in response.text for panel_id in panel_ids)


def test_a_panel_study_has_no_list_of_own_codes_and_a_code_with_nowhere_to_go_is_refused(api, coordinator):
    study = new_study(api, coordinator, completion_url="https://app.prolific.com/submissions/complete?cc=C1A2B3C4")
    conflict = api.client.get(f"/v1/studies/{study}/completion-codes", headers=coordinator)
    assert conflict.status_code == 409 and conflict.json()["error"]["code"] == "conflict"
    body = {"name": "Nowhere", "target_size": 5, "expires_at": EXPIRES, "completion_codes": "per_participant",
            "completion_url": "https://app.prolific.com/submissions/complete?cc=C1A2B3C4"}  # fmt: skip
    refused = api.client.post("/v1/studies", headers=coordinator, json=body)
    assert refused.status_code == 422 and "{code}" in refused.json()["error"]["message"]


MALFORMED = [
    "not json",
    [],
    {},
    {"outcomes": "returned"},
    {"outcomes": [{"panel_participant_id": "", "outcome": "returned"}]},
    {"outcomes": [{"panel_participant_id": "5f00", "outcome": "approved"}]},
    {"outcomes": [{"panel_participant_id": 5, "outcome": "returned"}]},
    {"outcomes": [{"panel_participant_id": "x" * 201, "outcome": "returned"}]},
    {"outcomes": [{"panel_participant_id": "nul\u0000", "outcome": "returned"}]},
    {"outcomes": [{"panel_participant_id": "a\tb", "outcome": "returned"}]},
    {"outcomes": [{"panel_participant_id": "a", "outcome": "returned"}] * 1001},
    {"outcomes": [{"panel_participant_id": "5f00", "outcome": None}]},
]


@pytest.mark.parametrize("body", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_outcomes_are_refused_in_the_apis_error_format(api, coordinator, body):
    study = new_study(api, coordinator)
    if isinstance(body, str):
        headers = {**coordinator, "Content-Type": "application/json"}
        response = api.client.post(f"/v1/studies/{study}/outcomes", headers=headers, content=body)
    else:
        response = api.client.post(f"/v1/studies/{study}/outcomes", headers=coordinator, json=body)
    assert 400 <= response.status_code < 500, response.text
    assert set(response.json()["error"]) == {"code", "message"}


@pytest.mark.parametrize("path", ["/v1/studies/not-a-study/completion-codes", "/v1/studies/not-a-study/outcomes"])
def test_a_malformed_study_id_is_refused_in_the_apis_error_format(api, coordinator, path):
    method = "POST" if path.endswith("outcomes") else "GET"
    response = api.client.request(method, path, headers=coordinator, json={"outcomes": []})
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_request"
