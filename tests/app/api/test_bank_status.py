"""The front page and the bank's public state: counts only, in words; the demo's settings stated wherever
they are in force; and before the first release, how far along the bank is rather than a bare 404."""

from __future__ import annotations

from agentbank.audit import log as audit
from agentbank.db.models import Participant
from agentbank.participants.withdrawal import withdraw
from agentbank.runtime.demo import seed_demo_bank
from agentbank.runtime.demo_settings import DEMO_SETTINGS
from tests.app.api.factories import exact_release, population
from tests.support.factories import keyring

URL = "/v1/open/instruments/gss/items/cappun/distribution"
FIELDS = {
    "participants",
    "agents",
    "building",
    "failed",
    "answered",
    "carded",
    "needed",
    "release",
    "demo",
    "says",
    "exact",
}


def test_the_front_page_names_every_page_and_who_it_is_for(api):
    page = api.client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["cache-control"] == "no-store"
    for path in ("/interview", "/survey", "/portal", "/explore", "/docs", "/review", "/projects", "/home.js"):
        assert f'"{path}"' in page.text, path
    for person in ("If you took part", "If you are a researcher", "If you review for the bank", "If your team"):
        assert person in page.text
    assert "agentbank_client.BankClient" in page.text
    assert "/v1/status" in api.client.get("/home.js").text


def test_anyone_reads_the_banks_state_in_counts(api):
    empty = api.client.get("/v1/status")
    assert empty.status_code == 200
    body = empty.json()
    assert set(body) == FIELDS
    assert (body["agents"], body["answered"], body["needed"], body["release"], body["demo"]) == (0, 0, 10, None, None)
    assert body["says"] == [
        "0 agents built and 0 being built; none has a validity card (scored against their own person's answers) "
        "(counts rounded up to tens).",
        "The open tier has no release yet: 0 of the 10 agents the first release needs have answered.",
    ]

    agents = population(api.session, [({"sex": 1 + i % 2}, 1) for i in range(12)])
    cut = exact_release(api.session)
    body = api.client.get("/v1/status").json()
    assert (body["agents"], body["answered"], body["release"]["id"], body["release"]["members"]) == (20, 20, cut.id, 12)
    assert body["exact"] is False and body["says"][0].startswith("up to 20 agents built")
    assert body["release"]["demo_settings"] is False and body["demo"] is None
    text = api.client.get("/v1/status").text
    pseudonyms = [api.session.get(Participant, a.participant_id).pseudonym for a in agents]
    assert not any(str(a.id) in text or str(a.participant_id) in text for a in agents)
    assert not any(p in text for p in pseudonyms)  # counts only: nobody is named


def test_live_counts_are_rounded_so_a_withdrawal_cannot_be_watched_but_the_operator_sees_them_exact(api):
    agents = population(api.session, [({"sex": 1}, 1)] * 12)
    operator = api.token("operator", "admin")
    before = api.client.get("/v1/status").json()
    assert (before["participants"], before["agents"], before["exact"]) == (20, 20, False)
    assert api.client.get("/v1/status", headers=operator).json()["agents"] == 12
    withdraw(api.session, api.bank.keys, agents[0].participant_id, audit.Actor("participant", "p"), ledger=None)
    after = api.client.get("/v1/status").json()
    assert {k: after[k] for k in ("participants", "agents")} == {k: before[k] for k in ("participants", "agents")}
    exact = api.client.get("/v1/status", headers=operator).json()
    assert (exact["participants"], exact["agents"], exact["exact"]) == (11, 11, True)


def test_a_demo_bank_states_its_settings_and_its_progress(api):
    seed_demo_bank(api.session, keyring())
    body = api.client.get("/v1/status").json()
    assert (body["participants"], body["building"], body["needed"]) == (12, 12, DEMO_SETTINGS.k)
    demo = body["demo"]
    assert (demo["k"], demo["mu"], demo["temperature"]) == (5, 8.0, 1.0)
    assert "fictional" in demo["note"] and "mu = 8" in demo["note"] and "k = 10 and mu = 1" in demo["note"]
    assert (
        body["says"][1] == "The open tier has no release yet: 0 of the 5 agents the first release needs have answered."
    )
    assert body["says"][2] == demo["note"]


def test_before_the_first_release_the_table_says_where_to_see_progress(api):
    headers = api.token("researcher", "aggregate:read")
    none_yet = api.client.get(URL, headers=headers)
    assert none_yet.status_code == 404 and none_yet.json()["error"]["code"] == "no_release"
    assert "GET /v1/status" in none_yet.json()["error"]["message"]
    assert api.client.get("/v1/open/instruments", headers=headers).json()[0]["released"] == []
    population(api.session, [({"sex": 1}, 1)] * 12)
    exact_release(api.session)
    listed = {i["key"]: i["released"] for i in api.client.get("/v1/open/instruments", headers=headers).json()}
    assert listed["gss"] == ["cappun"] and listed["ipip50"] == []  # the explorer offers what the release holds


def test_an_instrument_of_the_optional_reference_data_is_refused_plainly(api, tmp_path):
    """BFI-44 is read from the optional folder: without it, a clear 404 that names no server path."""
    api.bank.settings.reference_data_dir = tmp_path / "absent"
    refused = api.client.post("/v1/admin/population", json={"instrument": "bfi44"}, headers=api.token("ops", "admin"))
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "instrument_unavailable"
    assert "optional reference data" in refused.json()["error"]["message"]
    assert str(tmp_path) not in refused.text
