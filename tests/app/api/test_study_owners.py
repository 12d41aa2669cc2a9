"""A study belongs to the coordinator that created it: another coordinator's requests find no such study.

The attack this answers: any client with the ``studies`` scope read, exported, invited to and revoked
the invitations of every other coordinator's study (10 of 10 requests succeeded).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from agentbank.audit.log import Actor
from agentbank.db.models import InterviewInvitation, Study
from agentbank.studies import ownership

EXPIRES = (datetime.now(UTC) + timedelta(days=30)).isoformat()


@pytest.fixture
def two_coordinators(api):
    a, b = api.token("coordinator_a", "studies"), api.token("coordinator_b", "studies")
    created = api.client.post("/v1/studies", headers=a, json={"name": "A's cohort", "target_size": 5,
                                                              "expires_at": EXPIRES})  # fmt: skip
    assert created.status_code == 201, created.text
    study = created.json()["id"]
    issued = api.client.post(f"/v1/studies/{study}/invitations", headers=a, json={"count": 2})
    assert issued.status_code == 201, issued.text
    return a, b, study


CROSS = [
    ("GET", "/v1/studies/{s}", None),
    ("GET", "/v1/studies/{s}/export", None),
    ("GET", "/v1/studies/{s}/reminders", None),
    ("POST", "/v1/studies/{s}/invitations", {"count": 3}),
    ("POST", "/v1/studies/{s}/open-link", None),
    ("POST", "/v1/studies/{s}/revocations", {}),
]


@pytest.mark.parametrize(("method", "path", "body"), CROSS)
def test_another_coordinator_finds_no_such_study(api, two_coordinators, method, path, body):
    _, b, study = two_coordinators
    response = api.client.request(method, path.format(s=study), headers=b, json=body)
    assert response.status_code == 404, response.text
    # The same answer as for a study that does not exist: nothing tells B that A's study is there.
    missing = api.client.request(method, path.format(s="00000000-0000-4000-8000-000000000000"), headers=b, json=body)
    assert (missing.status_code, missing.json()) == (404, response.json())


def test_another_coordinators_revocation_leaves_the_invitations_usable(api, two_coordinators):
    a, b, study = two_coordinators
    assert api.client.post(f"/v1/studies/{study}/revocations", headers=b, json={}).status_code == 404
    assert api.client.post(f"/v1/studies/{study}/invitations", headers=b, json={"count": 3}).status_code == 404
    rows = api.session.scalars(select(InterviewInvitation).where(InterviewInvitation.study_id == study)).all()
    assert len(rows) == 2 and all(r.revoked_at is None for r in rows)
    # The owner still can.
    revoked = api.client.post(f"/v1/studies/{study}/revocations", headers=a, json={})
    assert revoked.status_code == 200 and revoked.json()["revoked"] == 2


def test_each_coordinator_lists_only_their_own_studies(api, two_coordinators):
    a, b, study = two_coordinators
    theirs = api.client.post("/v1/studies", headers=b, json={"name": "B's cohort", "target_size": 5,
                                                             "expires_at": EXPIRES})  # fmt: skip
    assert [s["id"] for s in api.client.get("/v1/studies", headers=a).json()] == [study]
    assert [s["id"] for s in api.client.get("/v1/studies", headers=b).json()] == [theirs.json()["id"]]


def test_the_operator_transfers_a_study(api, two_coordinators):
    a, b, study = two_coordinators
    row = api.session.get_one(Study, study)
    ownership.transfer(api.session, row, b["X-Client-Id"], Actor("operator", "cli"))
    assert api.client.get(f"/v1/studies/{study}", headers=b).status_code == 200
    assert api.client.get(f"/v1/studies/{study}", headers=a).status_code == 404


def test_a_name_another_coordinator_took_is_free_and_tells_nothing(api, two_coordinators):
    a, b, _ = two_coordinators
    body = {"name": "A's cohort", "target_size": 5, "expires_at": EXPIRES}
    assert api.client.post("/v1/studies", headers=b, json=body).status_code == 201
    assert api.client.post("/v1/studies", headers=a, json=body).status_code == 409  # the owner's own name twice
