"""A focus group end to end through the API: its dry run, submission, the group followed live, its result as
JSON and as an HTML report that says it is simulated; nobody outside the project sees it."""

from __future__ import annotations

from agentbank.restricted.groups.running import run_group
from tests.support.groups import approve_groups, group_body, group_team, submit


def test_a_focus_group_through_the_api(api):
    team = group_team(api)
    project = approve_groups(api, team)
    body = group_body(team, seats=4, max_turns=8)
    r = api.client.post(f"/v1/projects/{project}/focus-groups?dry_run=true", json=body, headers=team["member"])
    assert r.status_code == 200, r.text
    assert [x["agent_turns"] for x in r.json()["rounds"]] == [4, 4] and r.json()["calls"] == 16
    group_id = submit(api, team, project, body)
    outsider = api.token("outsider", "projects:apply", "individual:query")
    assert api.client.get(f"/v1/focus-groups/{group_id}", headers=outsider).status_code == 404
    run_group(api.bank.sessions, team["door"], team["embedder"], group_id)
    state = api.client.get(f"/v1/focus-groups/{group_id}", headers=team["member"])
    assert state.status_code == 200 and state.json()["status"] == "done"
    said = [t for t in state.json()["transcript"] if t["kind"] == "agent"]
    assert len(said) == 8 and all(t["status"] == "spoken" and t["text"] for t in said)
    result = api.client.get(f"/v1/focus-groups/{group_id}/result", headers=team["member"]).json()
    assert result["framing"]["simulated"] is True and result["framing"]["model"] == "scripted"
    assert len(result["seats"]) == 4 and all(s["flag"] for s in result["seats"])  # no report cards: flagged
    assert result["themes"] and all(t["utterances"] for t in result["themes"])
    assert {c["seat"] for c in result["stances"]["changes"]} == {"Seat 1", "Seat 2", "Seat 3", "Seat 4"}
    listed = api.client.get(f"/v1/projects/{project}/focus-groups", headers=team["member"])
    assert listed.status_code == 200, listed.text
    assert [(g["id"], g["status"], g["seats"], g["topics"]) for g in listed.json()] == [
        (str(group_id), "done", 4, ["The plan"])
    ]
    assert "transcript" not in listed.json()[0]  # a list says how groups stand, never what was said
    assert api.client.get(f"/v1/projects/{project}/focus-groups", headers=outsider).status_code == 404
    page = api.client.get(f"/v1/focus-groups/{group_id}/result?format=html", headers=team["member"])
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "simulated" in page.text and "scripted" in page.text and "not validated" in page.text
