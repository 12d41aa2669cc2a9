"""Input no client should send gets a clear 4xx, never a 500: lone surrogates, bad Basic credentials,
times without a zone, scopes never granted."""

from __future__ import annotations

import json

import pytest

from agentbank.access.clients import create_client
from tests.app.api.conftest import OPERATOR
from tests.app.api.protection import make_team
from tests.support.fuzzing import SURROGATE, with_each_text_broken
from tests.support.restricted import HARMS, PURPOSE, apply_and_approve


def raw(body: dict) -> bytes:
    """JSON as a client may send it: a lone surrogate escaped, which Python's own json accepts."""
    return json.dumps(body).encode()


@pytest.fixture
def team(api):
    return make_team(api)


def test_lone_surrogates_in_any_text_field_are_refused_plainly(api, team):
    project = apply_and_approve(api, team, quota=100)
    (held_agent, _) = team["agents"]
    cases = [
        ("/v1/projects", team["pi"], {"title": "Spending", "purpose": PURPOSE, "harms": HARMS,
                                      "members": [team["member"]["X-Client-Id"]], "query_types": ["survey"]}),
        (f"/v1/projects/{project}/jobs", {**team["member"], "Idempotency-Key": "fuzz"},
         {"kind": "open", "questions": ["Where did you grow up?"], "agents": [str(held_agent.id)]}),
        ("/v1/review/withheld/1", team["reviewer"], {"decision": "keep", "note": "fine"}),
        ("/v1/interviews", {}, {"invite": "an-invitation-code", "consent": {"recording": True, "use": True,
                                                                             "withdrawal": True}}),
    ]  # fmt: skip
    tried = 0
    for url, headers, body in cases:
        for broken in with_each_text_broken(body):
            r = api.client.post(url, content=raw(broken), headers={**headers, "Content-Type": "application/json"})
            tried += 1
            assert 400 <= r.status_code < 500, (url, broken, r.status_code, r.text)
            assert "error" in r.json()
    assert tried >= 10  # every text field of the four bodies
    # The decision with a broken note, on a real application: refused, and the project still undecided.
    fresh = api.client.post("/v1/projects", json=cases[0][2], headers=team["pi"]).json()["id"]
    r = api.client.post(f"/v1/projects/{fresh}/decision", content=raw({"approve": False, "note": SURROGATE}),
                        headers={**team["reviewer"], "Content-Type": "application/json"})  # fmt: skip
    assert r.status_code == 422 and r.json()["error"]["message"].startswith("note:")


def test_an_expiry_without_a_time_zone_is_refused(api, team):
    applied = api.client.post(
        "/v1/projects", json={"title": "Spending", "purpose": PURPOSE, "harms": HARMS, "query_types": ["survey"]},
        headers=team["pi"],
    ).json()  # fmt: skip
    naive = {"approve": True, "expires_at": "2030-01-01T00:00:00"}
    r = api.client.post(f"/v1/projects/{applied['id']}/decision", json=naive, headers=team["reviewer"])
    assert r.status_code == 422 and "expires_at" in r.json()["error"]["message"]


def test_basic_credentials_that_are_not_utf8_are_no_client(api):
    for header in ("Basic /w==", "Basic not-base64!", "Basic " + "bm9jb2xvbg=="):  # the last: "nocolon"
        r = api.client.post("/oauth/token", data={"grant_type": "client_credentials"},
                            headers={"Authorization": header})  # fmt: skip
        assert r.status_code == 401 and r.json()["error"] == "invalid_client", (header, r.text)


def test_a_scope_never_granted_is_invalid_scope(api):
    created = create_client(api.session, "narrow", ["aggregate:read"], OPERATOR)
    credentials = (created.client.client_id, created.secret)
    asked = api.client.post("/oauth/token", data={"grant_type": "client_credentials", "scope": "admin"},
                            auth=credentials)  # fmt: skip
    assert asked.status_code == 400 and asked.json()["error"] == "invalid_scope"
    ok = api.client.post("/oauth/token", data={"grant_type": "client_credentials", "scope": "aggregate:read"},
                         auth=credentials)  # fmt: skip
    assert ok.status_code == 200 and ok.json()["scope"] == "aggregate:read"
