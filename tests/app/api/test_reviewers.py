"""Reviewers decide on applications they are not part of, and see what they decide on."""

from __future__ import annotations

from tests.support.restricted import HARMS, PURPOSE


def test_a_reviewer_on_the_team_cannot_approve_it_and_reviewers_see_members_and_harms(api):
    pi = api.token("pi", "projects:apply", "individual:query")
    insider = api.token("insider", "review", "individual:query")  # reviews, and is on the team
    reviewer = api.token("reviewer", "review")
    application = {"title": "Spending", "purpose": PURPOSE, "harms": HARMS,
                   "members": [insider["X-Client-Id"]], "query_types": ["survey"]}  # fmt: skip
    project = api.client.post("/v1/projects", json=application, headers=pi).json()["id"]
    joined = api.client.post(f"/v1/projects/{project}/membership", json={"accept": True}, headers=insider)
    assert joined.status_code == 200 and joined.json()["status"] == "submitted"

    refused = api.client.post(f"/v1/projects/{project}/decision", json={"approve": True}, headers=insider)
    assert refused.status_code == 403 and "named on" in refused.json()["error"]["message"]

    seen = api.client.get(f"/v1/projects/{project}", headers=reviewer).json()
    assert seen["harms"] == HARMS and seen["purpose"] == PURPOSE
    assert set(seen["members"]) == {pi["X-Client-Id"], insider["X-Client-Id"]}
    approved = api.client.post(f"/v1/projects/{project}/decision", json={"approve": True}, headers=reviewer)
    assert approved.status_code == 200 and approved.json()["status"] == "approved"
