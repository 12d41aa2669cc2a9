"""A project's own instrument: added as JSON, a sheet or a Qualtrics export, versioned, approved by version
as part of the scope, asked only in that version, answered valid by construction with labels, and never
shown in the open tier."""

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from agentbank.consultation.door import AgentDoor
from agentbank.db.models import AuditEvent
from tests.support.factories import build
from tests.support.restricted import HARMS, PURPOSE, run_queued
from tests.support.team_instruments import POLICY

QSF = Path(__file__).parents[2] / "agentbank" / "data" / "team_survey.qsf"


@pytest.fixture
def team(api):
    member = api.token("member", "projects:apply", "individual:query")
    reviewer = api.token("reviewer", "review")
    _, agent, chat, embedder, keys = build(api.session, ref="file:town.json")
    door = AgentDoor(chat=chat, embedder=embedder, keys=keys, memory_token_budget=400)
    r = api.client.post(
        "/v1/projects",
        json={
            "title": "Town",
            "purpose": PURPOSE,
            "harms": HARMS,
            "agents": [str(agent.id)],
            "query_types": ["survey"],
        },
        headers=member,
    )
    return {
        "member": member,
        "reviewer": reviewer,
        "agent": agent,
        "door": door,
        "chat": chat,
        "project": r.json()["id"],
    }


def add(api, team, content, fmt="json", key="policy", **extra):
    body = {"key": key, "format": fmt, "content": content if isinstance(content, str) else json.dumps(content), **extra}
    return api.client.post(f"/v1/projects/{team['project']}/instruments", json=body, headers=team["member"])


def approve(api, team, instruments):
    decision = {"approve": True, "query_types": ["survey"], "quota": 100, "instruments": instruments}
    return api.client.post(f"/v1/projects/{team['project']}/decision", json=decision, headers=team["reviewer"])


def job(team, ref, items):
    return {"kind": "survey", "instrument": ref, "items": items, "agents": [str(team["agent"].id)]}


def test_versions_are_kept_and_an_unchanged_upload_is_the_same_version(api, team):
    first = add(api, team, POLICY)
    assert first.status_code == 201, first.text
    assert first.json()["ref"] == "policy@1" and len(first.json()["definition"]["items"]) == 6
    assert add(api, team, POLICY).json()["ref"] == "policy@1"
    changed = {**POLICY, "items": POLICY["items"][:2]}
    assert add(api, team, changed).json()["ref"] == "policy@2"
    # The reviewer reads exactly what each version asks.
    listed = api.client.get(f"/v1/projects/{team['project']}/instruments", headers=team["reviewer"]).json()
    assert [v["ref"] for v in listed] == ["policy@1", "policy@2"]
    assert listed[0]["definition"]["items"][5]["vignette"].startswith("Imagine")


def test_a_sheet_and_a_qualtrics_export_import(api, team):
    sheet = ("key,type,question,options,low,high,low_label,high_label\n"
             "bus,single,Do you take the bus?,Yes|No,,,,\n"
             "safe,scale,How safe do you feel at night?,,1,5,Not at all,Very\n")  # fmt: skip
    r = add(api, team, sheet, fmt="csv", key="transit", title="Transit")
    assert r.status_code == 201, r.text
    assert [i["type"] for i in r.json()["definition"]["items"]] == ["single", "scale"]
    r = add(api, team, QSF.read_text(), fmt="qsf", key="local")
    assert r.status_code == 201, r.text
    assert [i["type"] for i in r.json()["definition"]["items"]] == [
        "single", "multiple", "ranking", "numeric", "numeric", "scale"]  # fmt: skip
    assert [line.split(" ")[0] for line in r.json()["not_imported"]] == ["Q7_why", "Q8_grid", "Q10_split"]


@pytest.mark.parametrize(
    ("content", "fmt", "said"),
    [
        ({**POLICY, "items": [POLICY["items"][0], POLICY["items"][0]]}, "json", "each item needs its own key"),
        ({"title": "x", "items": [{**POLICY["items"][1], "low": 7, "high": 1}]}, "json", "item 1 (trust)"),
        ({"title": "x", "items": [{**POLICY["items"][2], "maximum": -1}]}, "json", "minimum must be below maximum"),
        ({"title": "x", "items": [{**POLICY["items"][0], "options": ["Yes"]}]}, "json", "item 1 (library): options"),
        ({"title": "x", "items": [{**POLICY["items"][0], "type": "slider"}]}, "json", "item 1 (library)"),
        ("{not json", "json", "the JSON does not parse"),
        ("key,type,question,colour\nq,single,Q?,red\n", "csv", "unknown: colour"),
        ('{"SurveyEntry": {}}', "qsf", "not a Qualtrics survey export"),
    ],
)
def test_a_bad_instrument_is_refused_with_the_reason(api, team, content, fmt, said):
    r = add(api, team, content, fmt=fmt, title="Sheet")
    assert r.status_code == 422 and said in r.json()["error"]["message"], r.text


def test_only_the_approved_version_is_asked_and_its_answers_are_valid_and_labelled(api, team):
    add(api, team, POLICY)
    add(api, team, {**POLICY, "items": POLICY["items"][:1]})
    assert approve(api, team, ["policy@3"]).status_code == 422  # no such version to approve
    r = approve(api, team, ["policy@1"])
    assert r.status_code == 200 and r.json()["scope"]["instruments"] == ["policy@1"]
    approved = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "project.approved")).one()
    assert approved.details["scope"]["instruments"] == ["policy@1"]  # the approval names the version

    url = f"/v1/projects/{team['project']}/jobs"
    refused = api.client.post(url, json=job(team, "policy@2", ["library"]), headers={**team["member"],
                              "Idempotency-Key": "unapproved"})  # fmt: skip
    assert refused.status_code == 403 and "not approved for instrument policy@2" in refused.text
    dry = api.client.post(url + "?dry_run=true", json=job(team, "policy@2", ["library"]), headers=team["member"])
    assert dry.status_code == 403

    keys = [i["key"] for i in POLICY["items"]]
    r = api.client.post(url, json=job(team, "policy@1", keys), headers={**team["member"], "Idempotency-Key": "k"})
    assert r.status_code == 202, r.text
    assert run_queued(api, team) == 1
    (result,) = api.client.get(f"/v1/jobs/{r.json()['id']}/results", headers=team["member"]).json()
    answers = {a["key"]: a for a in result["answers"]}
    assert answers["library"]["value"] in (1, 2, 3) and answers["library"]["label"] in ("Yes", "No", "Not sure")
    assert 1 <= answers["trust"]["value"] <= 7
    assert answers["trust"]["label"] == {1: "Not at all", 7: "Completely"}.get(answers["trust"]["value"], str(
        answers["trust"]["value"]))  # fmt: skip
    assert 0 <= answers["pay"]["value"] <= 200 and answers["pay"]["label"] is None
    used = answers["used"]["value"]
    assert used and len(set(used)) == len(used) and set(used) <= {1, 2, 3}
    assert answers["used"]["label"] == [["Library", "Bus", "Pool"][c - 1] for c in used]
    assert sorted(answers["budget"]["value"]) == [1, 2, 3]  # every option, once
    assert answers["cut"]["value"] in (10, 20) and answers["cut"]["label"] in ("Pool", "Bus")
    # The model was shown the vignette before the question, and the options with their codes.
    prompt = " ".join(m["content"] for call in team["chat"].calls for m in call["messages"])
    assert "Imagine the town must close one service next year." in prompt and "10 = Pool" in prompt


def test_a_team_instrument_is_never_in_the_open_tier(api, team):
    add(api, team, POLICY)
    approve(api, team, ["policy@1"])
    reader = api.token("reader", "aggregate:read")
    listed = api.client.get("/v1/open/instruments", headers=reader)
    assert listed.status_code == 200 and "policy" not in listed.text and "Town policy" not in listed.text
    assert api.client.get("/v1/open/instruments/policy@1/items", headers=reader).status_code == 404
