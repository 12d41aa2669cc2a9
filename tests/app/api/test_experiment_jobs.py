"""The restricted tier's ``experiment`` query type, through the real endpoints: who may submit it, arms
assigned and shown with the results, every trial audited, and a withdrawn agent answered for by nobody."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from agentbank.audit import log as audit
from agentbank.db.models import AuditEvent
from agentbank.participants.withdrawal import withdraw
from agentbank.restricted.experiments import EXPERIMENTS
from agentbank.restricted.experiments.assignment import assign
from tests.app.api.protection import make_team
from tests.support.factories import CANARY
from tests.support.restricted import HARMS, PURPOSE, run_queued

SCHILKE = EXPERIMENTS["schilke"]


@pytest.fixture
def team(api):
    return make_team(api)


def approve(api, team, query_types, quota=100):
    agents = [str(a.id) for a in team["agents"]]
    r = api.client.post("/v1/projects", headers=team["pi"], json={
        "title": "Power and trust", "purpose": PURPOSE, "harms": HARMS, "members": [team["member"]["X-Client-Id"]],
        "agents": agents, "query_types": query_types})  # fmt: skip
    assert r.status_code == 201, r.text
    project = r.json()["id"]
    r = api.client.post(f"/v1/projects/{project}/membership", json={"accept": True}, headers=team["member"])
    assert r.status_code == 200, r.text
    decision = {"approve": True, "note": "ok", "query_types": query_types, "quota": quota, "max_agents_per_job": 2}
    r = api.client.post(f"/v1/projects/{project}/decision", json=decision, headers=team["reviewer"])
    assert r.status_code == 200 and r.json()["status"] == "approved", r.text
    return project


def experiment(team, **extra):
    return {"kind": "experiment", "experiment": "schilke", "agents": [str(a.id) for a in team["agents"]], **extra}


def submit(api, project, headers, body, key):
    return api.client.post(f"/v1/projects/{project}/jobs", json=body, headers={**headers, "Idempotency-Key": key})


def test_who_may_submit_an_experiment(api, team):
    approved = approve(api, team, ["experiment"])
    survey_only = approve(api, team, ["survey"])
    body = experiment(team)
    assert submit(api, approved, {}, body, "a").status_code == 401
    assert submit(api, approved, team["reviewer"], body, "r").status_code == 403
    assert submit(api, approved, team["admin"], body, "adm").status_code == 403
    assert submit(api, approved, team["outsider"], body, "o").status_code == 404  # not a member
    refused = submit(api, survey_only, team["member"], body, "s")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "out_of_scope"
    unknown = submit(api, approved, team["member"], experiment(team, experiment="milgram"), "u")
    assert unknown.status_code == 422
    accepted = submit(api, approved, team["member"], body, "m")
    assert accepted.status_code == 202, accepted.text
    project = api.client.get(f"/v1/projects/{approved}", headers=team["member"]).json()
    assert project["quota_used"] == 2 * SCHILKE.per_agent  # every answer of every agent counts
    assert len(team["chat"].calls) == 0  # submitting calls no model


def test_an_experiment_job_answers_each_agent_in_its_arm_and_audits_it(api, team):
    project = approve(api, team, ["experiment"])
    job = submit(api, project, team["member"], experiment(team, blinding="unblinded", seed=4), "x").json()["id"]
    assert run_queued(api, team) == 2
    results = api.client.get(f"/v1/jobs/{job}/results", headers=team["member"])
    assert results.status_code == 200, results.text
    arms = assign(SCHILKE, [a.id for a in team["agents"]], 4)
    for result in results.json():
        assert result["status"] in ("released", "withheld")
        assert result["arms"] == list(arms[next(a.id for a in team["agents"] if str(a.id) == result["agent_id"])])
        assert len(result["answers"]) == SCHILKE.per_agent
    assert {tuple(r["arms"]) for r in results.json()} == {("low_power",), ("high_power",)}  # balanced
    assert CANARY not in results.text
    events = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "job.answer")).all()
    assert len(events) == 2
    assert all(e.details["kind"] == "experiment" and e.details["experiment"] == "schilke" for e in events)
    assert {e.details["blinding"] for e in events} == {"unblinded"}


def test_an_agent_withdrawn_after_submission_is_answered_by_nobody(api, team):
    project = approve(api, team, ["experiment"])
    job = submit(api, project, team["member"], experiment(team), "w").json()["id"]
    withdraw(api.session, team["keys"], team["participants"][1].id, audit.Actor("participant", "p"), ledger=None)
    assert run_queued(api, team) == 1  # the withdrawal cancelled the other agent's task
    statuses = {r["agent_id"]: r["status"] for r in api.client.get(f"/v1/jobs/{job}/results",
                                                                    headers=team["member"]).json()}  # fmt: skip
    assert statuses[str(team["agents"][1].id)] == "unavailable"
    assert statuses[str(team["agents"][0].id)] in ("released", "withheld")


def test_an_experiment_job_is_estimated_before_it_runs(api, team):
    project = approve(api, team, ["experiment"])
    api.bank.chat, api.bank.embedder = team["chat"], team["embedder"]
    api.bank.settings.memory_token_budget = 4000
    r = api.client.post(f"/v1/projects/{project}/jobs?dry_run=true", json=experiment(team), headers=team["member"])
    assert r.status_code == 200, r.text
    estimate = r.json()
    assert estimate["answers"] == 2 * SCHILKE.per_agent and estimate["calls"] == estimate["answers"]
    assert any("earlier steps" in note for note in estimate["notes"])
    assert team["chat"].calls == []
    ran = submit(api, project, team["member"], experiment(team), "measured")
    run_queued(api, team)
    used = api.client.get(f"/v1/jobs/{ran.json()['id']}", headers=team["member"]).json()["used"]
    assert used["answers_made"] == estimate["answers"]
    # Later steps show the earlier answers, which the estimate cannot: it counts short, never over.
    assert 0.5 * used["prompt_tokens"] <= estimate["prompt_tokens"] <= used["prompt_tokens"]
    print(f"\nexperiment job: prompt {estimate['prompt_tokens']}/{used['prompt_tokens']} (estimated/used)")
