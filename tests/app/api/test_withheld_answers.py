"""The output check on the restricted tier: leaky answers are held, shown as placeholders, reviewed."""

import pytest
from sqlalchemy import select

from agentbank.db.models import AuditEvent, JobResult, WithheldAnswer
from tests.app.api.protection import make_team, open_job, planted_marker
from tests.support.restricted import apply_and_approve, run_queued


@pytest.fixture
def team(api):
    return make_team(api)


def test_a_leaky_answer_is_withheld_then_released_by_a_reviewer(api, team):
    project = apply_and_approve(api, team)
    job = open_job(api, team, project, ["Where did you grow up?", "What is your lucky charm?"])
    assert run_queued(api, team) == 1
    marker = team["keys"].canary(team["agents"][0].id)
    assert all(planted_marker(call["messages"]) == marker for call in team["chat"].calls)

    r = api.client.get(f"/v1/jobs/{job}/results", headers=team["member"])
    assert r.status_code == 200 and marker not in r.text
    (result,) = r.json()
    assert result["status"] == "withheld"
    first, second = result["answers"]
    assert first["value"] == "I grew up on a farm." and first["withheld"] is False
    assert second["withheld"] is True and second["reason"] == "under review" and second["value"] is None
    assert api.session.scalars(select(JobResult.status)).all() == ["withheld"]

    events = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "output.withheld")).all()
    assert [e.details["reasons"] for e in events] == [["canary"]] and marker not in str(events[0].details)
    answered = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "job.answer")).one()
    assert answered.details["withheld"] == 1 and answered.details["released"] is False

    assert api.client.get("/v1/review/withheld", headers=team["member"]).status_code == 403
    queue = api.client.get("/v1/review/withheld", headers=team["reviewer"])
    assert queue.status_code == 200
    (held,) = queue.json()
    assert held["reasons"] == ["canary"] and marker in held["answer"]["value"] and held["job_id"] == job
    value = held["answer"]["value"]
    assert [value[a:b] for a, b in held["answer"]["highlights"]["value"]] == [marker]  # the reviewer sees where

    url = f"/v1/review/withheld/{held['id']}"
    assert api.client.post(url, json={"decision": "release"}, headers=team["member"]).status_code == 403
    decided = api.client.post(url, json={"decision": "release", "note": "a test marker"}, headers=team["reviewer"])
    assert decided.status_code == 200 and decided.json()["status"] == "released"
    again = api.client.post(url, json={"decision": "keep"}, headers=team["reviewer"])
    assert again.status_code == 409
    missing = api.client.post("/v1/review/withheld/999999", json={"decision": "keep"}, headers=team["reviewer"])
    assert missing.status_code == 404

    (result,) = api.client.get(f"/v1/jobs/{job}/results", headers=team["member"]).json()
    assert result["status"] == "released" and marker in result["answers"][1]["value"]
    actions = api.session.scalars(select(AuditEvent.action).order_by(AuditEvent.seq)).all()
    assert "review.withheld.list" in actions and "review.withheld.decide" in actions
    row = api.session.scalars(select(WithheldAnswer)).one()
    assert row.status == "released" and row.decided_by


def test_kept_answers_stay_hidden(api, team):
    project = apply_and_approve(api, team)
    job = open_job(api, team, project, ["Tell me your lucky charm, please."])
    run_queued(api, team)
    (held,) = api.client.get("/v1/review/withheld", headers=team["reviewer"]).json()
    r = api.client.post(f"/v1/review/withheld/{held['id']}", json={"decision": "keep"}, headers=team["reviewer"])
    assert r.json()["status"] == "kept"
    (result,) = api.client.get(f"/v1/jobs/{job}/results", headers=team["member"]).json()
    assert result["status"] == "withheld" and result["answers"][0]["withheld"] is True
    assert api.client.get("/v1/review/withheld", headers=team["reviewer"]).json() == []
    kept = api.client.get("/v1/review/withheld?status=kept", headers=team["reviewer"]).json()
    assert [k["id"] for k in kept] == [held["id"]]
