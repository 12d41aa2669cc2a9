"""With AGENTBANK_REVIEW_APPROVALS=2, a project opens only when two different outside reviewers approve."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

from agentbank.core.settings import Settings
from agentbank.db.models import AuditEvent
from tests.support.factories import SECRET
from tests.support.restricted import HARMS, PURPOSE


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(
        secret_key=SECRET, data_dir=tmp_path, rate_limit_per_minute=10_000, reference_data_dir="../shared/data",
        review_approvals=2,
    )  # fmt: skip


@pytest.fixture
def people(api):
    return {
        "pi": api.token("pi", "projects:apply", "individual:query"),
        "insider": api.token("insider", "review"),
        "first": api.token("first", "review"),
        "second": api.token("second", "review"),
        "third": api.token("third", "review"),
    }


@pytest.fixture
def project(api, people):
    application = {"title": "Spending", "purpose": PURPOSE, "harms": HARMS,
                   "members": [people["insider"]["X-Client-Id"]], "query_types": ["survey", "open"]}  # fmt: skip
    r = api.client.post("/v1/projects", json=application, headers=people["pi"])
    assert r.status_code == 201, r.text
    joined = api.client.post(f"/v1/projects/{r.json()['id']}/membership", json={"accept": True},
                             headers=people["insider"])  # fmt: skip
    assert joined.status_code == 200, joined.text
    return r.json()["id"]


def decide(api, project, who, **decision):
    return api.client.post(f"/v1/projects/{project}/decision", json={"approve": True, **decision}, headers=who)


def test_one_approval_leaves_the_project_waiting_and_a_second_reviewer_opens_it(api, people, project):
    first = decide(api, project, people["first"], query_types=["survey", "open"], quota=50, note="looks fine")
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["status"] == "submitted" and body["scope"] == {}
    assert body["approvals"] == [people["first"]["X-Client-Id"]] and body["approvals_needed"] == 2
    seen = api.client.get(f"/v1/projects/{project}", headers=people["third"]).json()
    assert seen["approvals"] == [people["first"]["X-Client-Id"]] and seen["status"] == "submitted"

    # Not approved yet: the team cannot query.
    job = {"kind": "survey", "agents": [str(uuid.uuid4())], "instrument": "gss", "items": ["cappun"]}
    headers = {**people["pi"], "Idempotency-Key": "a"}
    refused = api.client.post(f"/v1/projects/{project}/jobs", json=job, headers=headers)
    assert refused.status_code == 403 and "not approved" in refused.json()["error"]["message"]

    again = decide(api, project, people["first"])
    assert again.status_code == 409 and "another reviewer" in again.json()["error"]["message"]
    insider = decide(api, project, people["insider"])
    assert insider.status_code == 403 and "named on" in insider.json()["error"]["message"]

    second = decide(api, project, people["second"], query_types=["survey"], quota=200)
    assert second.status_code == 200, second.text
    body = second.json()
    assert body["status"] == "approved"
    assert body["approvals"] == [people["first"]["X-Client-Id"], people["second"]["X-Client-Id"]]
    # What both agreed to: survey only (the second's), 50 queries (the first's).
    assert body["scope"]["query_types"] == ["survey"] and body["scope"]["quota"] == 50
    actions = api.session.scalars(
        select(AuditEvent.action).where(AuditEvent.project_id == uuid.UUID(project)).order_by(AuditEvent.seq)
    ).all()
    assert actions == ["project.apply", "project.member.accept", "project.submitted", "project.approval",
                       "project.read", "project.approved"]  # fmt: skip


def test_a_rejection_after_one_approval_is_final(api, people, project):
    assert decide(api, project, people["first"]).json()["status"] == "submitted"
    rejected = api.client.post(f"/v1/projects/{project}/decision", json={"approve": False}, headers=people["second"])
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    late = decide(api, project, people["third"])
    assert late.status_code == 409 and "already rejected" in late.json()["error"]["message"]


def test_approvals_that_share_no_query_type_open_nothing(api, people, project):
    assert decide(api, project, people["first"], query_types=["open"]).status_code == 200
    disjoint = decide(api, project, people["second"], query_types=["survey"])
    assert disjoint.status_code == 409 and "no query type" in disjoint.json()["error"]["message"]
    body = api.client.get(f"/v1/projects/{project}", headers=people["third"]).json()
    assert body["status"] == "submitted" and body["approvals"] == [people["first"]["X-Client-Id"]]


def test_the_application_role_cannot_change_or_remove_an_approval(api, people, project):
    decide(api, project, people["first"])
    with api.session.begin_nested():
        api.session.execute(text("SET LOCAL ROLE agentbank_app"))
        for statement in ("UPDATE project_approvals SET note = 'x'", "DELETE FROM project_approvals"):
            with pytest.raises(DBAPIError, match="permission denied"), api.session.begin_nested():
                api.session.execute(text(statement))
