"""Applications, review, jobs with idempotency, scope and quota, and results with provenance."""

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from agentbank.building.validity.cards import CardScore, store_cards
from agentbank.db.models import AuditEvent, Project
from agentbank.restricted.jobs.lifecycle import run_job_task
from tests.support.factories import CANARY
from tests.support.restricted import HARMS, PURPOSE, apply_and_approve, queued, run_queued, survey


def test_job_lifecycle_with_idempotency(api, team):
    project = apply_and_approve(api, team)
    url = f"/v1/projects/{project}/jobs"
    headers = {**team["member"], "Idempotency-Key": "job-1"}
    first = api.client.post(url, json=survey(team), headers=headers)
    assert first.status_code == 202 and first.json()["status"] == "queued" and first.json()["total"] == 1
    assert api.client.post(url, json=survey(team), headers=headers).status_code == 409  # still in flight
    assert len(team["chat"].calls) == 0  # submitting never calls a model

    assert run_queued(api, team) == 1
    assert run_queued(api, team) == 0
    job_id = first.json()["id"]
    status = api.client.get(f"/v1/jobs/{job_id}", headers=team["member"]).json()
    assert (status["status"], status["done"], status["total"]) == ("done", 1, 1)

    replay = api.client.post(url, json=survey(team), headers=headers)
    assert replay.status_code == 200 and replay.json()["id"] == job_id
    other = api.client.post(url, json=survey(team, items=("grass",)), headers=headers)
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
    # Keys belong to a client: the PI's "job-1" is a new job.
    theirs = api.client.post(url, json=survey(team), headers={**team["pi"], "Idempotency-Key": "job-1"})
    assert theirs.status_code == 202 and theirs.json()["id"] != job_id

    results = api.client.get(f"/v1/jobs/{job_id}/results", headers=team["member"])
    assert results.status_code == 200
    (result,) = results.json()
    assert result["agent_id"] == str(team["agents"][0].id) and result["status"] == "released"
    assert [a["value"] for a in result["answers"]] == [1, 1]
    assert result["answers"][0]["provenance"]["model"] == "scripted"
    assert CANARY not in results.text and "farm" not in results.text  # never the transcript

    actions = api.session.scalars(select(AuditEvent.action).order_by(AuditEvent.seq)).all()
    assert actions.count("job.submit") == 2 and actions.count("job.answer") == 1
    answered = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "job.answer")).one()
    assert answered.agent_id == team["agents"][0].id and answered.details["released"] is True


def test_each_result_is_written_once_when_a_task_runs_twice(api, team):
    project = apply_and_approve(api, team)
    r = api.client.post(
        f"/v1/projects/{project}/jobs", json=survey(team), headers={**team["member"], "Idempotency-Key": "k"}
    )
    ((task_id, args),) = queued(api)
    job, agent = uuid.UUID(args["job_id"]), uuid.UUID(args["agent_id"])
    assert run_job_task(api.bank.sessions, team["door"], job, agent, Path(".")) is True
    assert run_job_task(api.bank.sessions, team["door"], job, agent, Path(".")) is False  # a retried task
    assert api.client.get(f"/v1/jobs/{r.json()['id']}", headers=team["member"]).json()["done"] == 1


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"agents": "both", "grant": {"agents": "first"}}, "out_of_scope"),
        ({"grant": {"quota": 3}, "items": ["cappun", "gunlaw", "grass", "courts"]}, "quota_exceeded"),
        ({"grant": {"max_agents_per_job": 1}, "agents": "both"}, "out_of_scope"),
        ({"grant": {"query_types": ["open"]}}, "out_of_scope"),
        ({"expire": True}, "project_expired"),
    ],
)
def test_refused_before_any_model_call(api, team, change, code):
    grant = dict(change.get("grant", {}))
    if grant.get("agents") == "first":
        grant["agents"] = [str(team["agents"][0].id)]
    project = apply_and_approve(api, team, **grant)
    if change.get("expire"):
        past = (datetime.now(UTC) - timedelta(days=1)).isoformat()
        expired = Project.scope.op("||")(func.jsonb_build_object("expires_at", past))
        api.session.execute(update(Project).where(Project.id == uuid.UUID(project)).values(scope=expired))
    agents = team["agents"] if change.get("agents") == "both" else team["agents"][:1]
    body = survey(team, agents=agents, items=change.get("items", ["cappun"]))
    r = api.client.post(f"/v1/projects/{project}/jobs", json=body, headers={**team["member"], "Idempotency-Key": "x"})
    assert r.status_code == 403 and r.json()["error"]["code"] == code, r.text
    assert queued(api) == [] and team["chat"].calls == []


def test_outsiders_and_unapproved_projects(api, team):
    project = apply_and_approve(api, team)
    r = api.client.post(
        f"/v1/projects/{project}/jobs", json=survey(team), headers={**team["outsider"], "Idempotency-Key": "x"}
    )
    assert r.status_code == 404  # a project one is not in does not exist for one
    assert api.client.get(f"/v1/projects/{project}", headers=team["outsider"]).status_code == 404
    pending = api.client.post(
        "/v1/projects", headers=team["pi"],
        json={"title": "Other", "purpose": PURPOSE, "harms": HARMS, "query_types": ["survey"]},
    ).json()["id"]  # fmt: skip
    r = api.client.post(
        f"/v1/projects/{pending}/jobs", json=survey(team), headers={**team["pi"], "Idempotency-Key": "y"}
    )
    assert r.status_code == 403
    again = api.client.post(f"/v1/projects/{project}/decision", json={"approve": False}, headers=team["reviewer"])
    assert again.status_code == 409


def test_reviewers_cannot_approve_their_own_application(api, team):
    both = api.token("both", "projects:apply", "review")
    pid = api.client.post(
        "/v1/projects",
        headers=both,
        json={"title": "Mine", "purpose": PURPOSE, "harms": HARMS, "query_types": ["survey"]},
    ).json()["id"]
    assert api.client.post(f"/v1/projects/{pid}/decision", json={"approve": True}, headers=both).status_code == 403


def test_project_agents_come_with_their_report_cards(api, team):
    project = apply_and_approve(api, team, agents=[str(team["agents"][0].id)])
    scored = team["agents"][0]
    store_cards(
        api.session,
        team["keys"],
        [CardScore(scored.id, "interview", 30, 0.6, 0.75, 0.8)],
        instrument="gss", run_id="panel-abc", model="m", prompt_version="p-1",
    )  # fmt: skip
    r = api.client.get(f"/v1/projects/{project}/agents", headers=team["member"])
    assert r.status_code == 200, r.text
    listed = r.json()
    assert [a["id"] for a in listed] == [str(scored.id)]  # only the approved subset
    card = listed[0]["report_cards"][0]
    assert card["normalized_accuracy"] == 0.8 and card["self_consistency"] == 0.75 and card["instrument"] == "gss"
    assert api.client.get(f"/v1/projects/{project}/agents", headers=team["outsider"]).status_code == 404
    events = api.session.scalars(select(AuditEvent.action).where(AuditEvent.project_id == uuid.UUID(project))).all()
    assert "project.agents.list" in events
