"""Nobody reviews, approves or releases anything for a project they are named on, whatever scopes they hold.

The attack this answers: a client holding both ``review`` and ``individual:query`` read its own project's
withheld answer in the review queue and released it to itself (1 of 1). A decision on an application by a
reviewer on its team is refused as well (``test_reviewers``).
"""

from __future__ import annotations

import pytest

from tests.app.api.protection import make_team, open_job
from tests.support.restricted import apply_and_approve, run_queued


@pytest.fixture
def team(api):
    team = make_team(api)
    # The team's member is a reviewer too.
    team["member"] = api.token("member-reviewer", "individual:query", "review")
    return team


def test_a_reviewer_on_the_team_neither_sees_nor_releases_its_withheld_answer(api, team):
    project = apply_and_approve(api, team)
    job = open_job(api, team, project, ["What is your lucky charm?"])
    assert run_queued(api, team) == 1
    assert api.client.get("/v1/review/withheld", headers=team["member"]).json() == []
    (held,) = api.client.get("/v1/review/withheld", headers=team["reviewer"]).json()
    url = f"/v1/review/withheld/{held['id']}"
    refused = api.client.post(url, json={"decision": "release"}, headers=team["member"])
    assert refused.status_code == 403 and "another reviewer" in refused.json()["error"]["message"]
    (result,) = api.client.get(f"/v1/jobs/{job}/results", headers=team["member"]).json()
    assert result["answers"][0]["withheld"] is True
    # A reviewer not on the team decides instead.
    released = api.client.post(url, json={"decision": "release"}, headers=team["reviewer"])
    assert released.status_code == 200 and released.json()["status"] == "released"
