"""Shared helpers of the tests (moved from ``tests.app.api.test_restricted_tier``)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy import text

from agentbank.consultation.door import AgentDoor
from agentbank.restricted.jobs.lifecycle import JOB_TASK, run_job_task
from tests.support.factories import build

PURPOSE = "Study how interview agents answer questions about public spending."


HARMS = "Answers could be linked to people; we only use aggregates in publications."


@pytest.fixture
def team(api):
    pi = api.token("pi", "projects:apply", "individual:query")
    member = api.token("member", "individual:query")
    outsider = api.token("outsider", "projects:apply", "individual:query")
    reviewer = api.token("reviewer", "review")
    _, a1, chat, embedder, keys = build(api.session, ref="file:one.json")
    _, a2, *_ = build(api.session, ref="file:two.json", chat=chat, embedder=embedder)
    door = AgentDoor(chat=chat, embedder=embedder, keys=keys, memory_token_budget=400)
    chat.calls.clear()  # only the calls jobs make count from here
    return {"pi": pi, "member": member, "outsider": outsider, "reviewer": reviewer, "agents": [a1, a2],
            "chat": chat, "door": door, "keys": keys}  # fmt: skip


def apply_and_approve(api, team, **grant):
    r = api.client.post(
        "/v1/projects",
        json={"title": "Spending", "purpose": PURPOSE, "harms": HARMS, "members": [team["member"]["X-Client-Id"]],
              "agents": [str(a.id) for a in team["agents"]], "query_types": ["survey", "open"]},
        headers=team["pi"],
    )  # fmt: skip
    assert r.status_code == 201, r.text
    project = r.json()["id"]
    # The member named on the team accepts; until then the project cannot be reviewed.
    r = api.client.post(f"/v1/projects/{project}/membership", json={"accept": True}, headers=team["member"])
    assert r.status_code == 200 and r.json()["status"] == "submitted", r.text
    decision = {"approve": True, "note": "fine", "query_types": ["survey", "open"], "quota": 20,
                "max_agents_per_job": 2, **grant}  # fmt: skip
    r = api.client.post(f"/v1/projects/{project}/decision", json=decision, headers=team["reviewer"])
    assert r.status_code == 200 and r.json()["status"] == "approved", r.text
    return project


def survey(team, agents=None, items=("cappun", "gunlaw")):
    return {"kind": "survey", "instrument": "gss", "items": list(items),
            "agents": [str(a.id) for a in (agents or team["agents"][:1])]}  # fmt: skip


def queued(api) -> list:
    rows = api.session.execute(
        text("SELECT id, args FROM procrastinate_jobs WHERE task_name = :t AND status = 'todo' ORDER BY id"),
        {"t": JOB_TASK},
    )
    return rows.all()


def run_queued(api, team) -> int:
    tasks = queued(api)
    for task_id, args in tasks:
        run_job_task(api.bank.sessions, team["door"], uuid.UUID(args["job_id"]), uuid.UUID(args["agent_id"]), Path("."))
        api.session.execute(text("UPDATE procrastinate_jobs SET status = 'succeeded' WHERE id = :i"), {"i": task_id})
    return len(tasks)
