"""Who decides what: a team's members consent to it, a console session's token is only ever its cookie,
a GET changes nothing, and every read of a job or a project is in the log."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from agentbank.audit import log as audit
from agentbank.db.models import AuditEvent, OutboxEvent
from tests.app.api.protection import make_team
from tests.support.consoles import signed_in
from tests.support.restricted import HARMS, PURPOSE, apply_and_approve, survey


def _actions(api, project: str | None = None) -> list[str]:
    query = select(AuditEvent.action).order_by(AuditEvent.id)
    if project is not None:
        query = query.where(AuditEvent.project_id == uuid.UUID(project))
    return list(api.session.scalars(query))


def test_nobody_is_on_a_team_or_kept_from_reviewing_it_without_accepting(api):
    pi = api.token("pi", "projects:apply", "individual:query")
    colleague = api.token("colleague", "individual:query")
    reviewer = api.token("reviewer", "review")  # named by the applicant, to keep them from reviewing
    other = api.token("other reviewer", "review")
    application = {"title": "Spending", "purpose": PURPOSE, "harms": HARMS, "query_types": ["survey"],
                   "members": [colleague["X-Client-Id"], reviewer["X-Client-Id"]]}  # fmt: skip
    created = api.client.post("/v1/projects", json=application, headers=pi).json()
    project = created["id"]
    assert created["status"] == "forming" and created["members"] == [pi["X-Client-Id"]]
    assert set(created["invited"]) == {colleague["X-Client-Id"], reviewer["X-Client-Id"]}

    # Until every named client answers, nobody can decide on it, and the invited are no members.
    waiting = api.client.post(f"/v1/projects/{project}/decision", json={"approve": True}, headers=other)
    assert waiting.status_code == 409 and "accept" in waiting.json()["error"]["message"]
    assert api.client.get(f"/v1/projects/{project}", headers=colleague).json()["status"] == "forming"
    assert api.client.get(f"/v1/projects/{project}/jobs", headers=colleague).status_code == 404

    accepted = api.client.post(f"/v1/projects/{project}/membership", json={"accept": True}, headers=colleague)
    assert accepted.status_code == 200 and accepted.json()["status"] == "forming"
    again = api.client.post(f"/v1/projects/{project}/membership", json={"accept": True}, headers=colleague)
    assert again.status_code == 409
    declined = api.client.post(f"/v1/projects/{project}/membership", json={"accept": False}, headers=reviewer)
    assert declined.status_code == 200
    body = declined.json()
    assert body["status"] == "submitted" and body["invited"] == []
    assert set(body["members"]) == {pi["X-Client-Id"], colleague["X-Client-Id"]}

    # Named without consent, the reviewer was never on the team: they may review it.
    approved = api.client.post(f"/v1/projects/{project}/decision", json={"approve": True}, headers=reviewer)
    assert approved.status_code == 200 and approved.json()["status"] == "approved"
    membership = [a for a in _actions(api, project) if a.startswith(("project.apply", "project.member", "project.sub"))]
    assert membership == ["project.apply", "project.member.accept", "project.member.decline", "project.submitted"]


def test_a_console_session_token_is_refused_as_a_bearer_token(api):
    _, cookie, token = signed_in(api, scopes=("review",))
    assert api.client.get("/v1/review/withheld", headers=cookie).status_code == 200
    bearer = {"Authorization": f"Bearer {token}"}
    assert api.client.get("/v1/review/withheld", headers=bearer).status_code == 401
    # As a bearer token it would have skipped the CSRF check a change needs.
    refused = api.client.post("/v1/review/withheld/1", json={"decision": "release"}, headers=bearer)
    assert refused.status_code == 401


def test_a_notice_is_marked_read_by_a_post_never_by_a_get(api):
    team = make_team(api)
    project = apply_and_approve(api, team)
    notice = OutboxEvent(topic="participant.withdrawn", project_id=uuid.UUID(project),
                         payload={"notice": "delete the copies you hold", "agent_ids": []})  # fmt: skip
    api.session.add(notice)
    api.session.flush()
    url = f"/v1/projects/{project}/notices"
    # A page of another site may send a member's browser to a URL: that GET reads, and changes nothing.
    read = api.client.get(url, headers=team["member"]).json()
    assert [n["first_read_at"] for n in read] == [None]
    api.session.refresh(notice)
    assert notice.delivered_at is None
    marked = api.client.post(f"{url}/{notice.id}/read", headers=team["member"])
    assert marked.status_code == 200 and marked.json()["first_read_at"]
    assert api.client.get(f"{url}/{notice.id}/read", headers=team["member"]).status_code == 405


def test_every_read_of_a_job_or_a_project_is_audited(api):
    team = make_team(api)
    project = apply_and_approve(api, team)
    r = api.client.post(f"/v1/projects/{project}/jobs", json=survey(team),
                        headers={**team["member"], "Idempotency-Key": "audited"})  # fmt: skip
    job = r.json()["id"]
    before = len(_actions(api))
    assert api.client.get(f"/v1/jobs/{job}", headers=team["member"]).status_code == 200
    assert api.client.get(f"/v1/projects/{project}", headers=team["member"]).status_code == 200
    assert api.client.get(f"/v1/projects/{project}", headers=team["reviewer"]).status_code == 200
    assert api.client.get("/v1/projects", headers=team["member"]).status_code == 200
    assert api.client.get(f"/v1/projects/{project}/jobs", headers=team["member"]).status_code == 200
    assert api.client.get(f"/v1/jobs/{job}", headers=team["outsider"]).status_code == 404  # no read, no event
    reads = api.session.scalars(select(AuditEvent).where(AuditEvent.id > 0).order_by(AuditEvent.id)).all()[before:]
    assert [e.action for e in reads] == ["job.read", "project.read", "project.read", "project.list",
                                         "project.jobs.list"]  # fmt: skip
    member, reviewer = team["member"]["X-Client-Id"], team["reviewer"]["X-Client-Id"]
    assert [e.actor_id for e in reads] == [member, member, reviewer, member, member]
    assert reads[0].details["job_id"] == job and all(str(e.project_id) == project for e in reads if e.project_id)
    assert audit.SYSTEM.id not in {e.actor_id for e in reads}
