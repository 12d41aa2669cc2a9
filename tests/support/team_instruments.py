"""Shared helpers of the tests (moved from ``tests.app.api.test_malformed_instruments``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.restricted import HARMS, PURPOSE

QSF_FILE = Path(__file__).parents[1] / "agentbank" / "data" / "team_survey.qsf"


SHEET = ("key,type,question,options,low,high,low_label,high_label,minimum,maximum\n"
         "bus,single,Do you take the bus?,Yes|No,,,,,,\n"
         "safe,scale,How safe do you feel at night?,,1,5,Not at all,Very,,\n"
         "pay,numeric,Dollars a year for longer hours?,,,,,,0,200\n")  # fmt: skip


HUGE = "1" + "0" * 5000  # more digits than Python turns into an int from text


MARK = "\ue000"  # around a token to write into a file's text as it stands (1e999, which json writes as Infinity)


def literal(token: str) -> str:
    return f"{MARK}{token}{MARK}"


def as_text(survey: dict[str, Any]) -> str:
    """The survey as JSON, each ``literal`` written bare."""
    return json.dumps(survey).replace('"\\ue000', "").replace('\\ue000"', "")


@pytest.fixture
def project(api) -> dict[str, Any]:
    """An approved project and the headers of its member, who uploads its instruments."""
    member = api.token("member", "projects:apply", "individual:query")
    reviewer = api.token("reviewer", "review")
    applied = {"title": "Town", "purpose": PURPOSE, "harms": HARMS, "query_types": ["survey"]}
    project_id = api.client.post("/v1/projects", json=applied, headers=member).json()["id"]
    decision = {"approve": True, "query_types": ["survey"], "quota": 100}
    r = api.client.post(f"/v1/projects/{project_id}/decision", json=decision, headers=reviewer)
    assert r.status_code == 200 and r.json()["status"] == "approved", r.text
    return {"url": f"/v1/projects/{project_id}/instruments", "member": member}


def upload(api, project, fmt: str, content: str, key: str = "policy"):
    body = {"key": key, "format": fmt, "content": content, "title": "Sheet"}
    # Sent as Python writes JSON, so a file's own text (NUL escapes included) arrives exactly as made.
    return api.client.post(project["url"], content=json.dumps(body), headers={**project["member"],
                           "Content-Type": "application/json"})  # fmt: skip


POLICY = {
    "title": "Town policy",
    "preamble": "Questions about your town.",
    "items": [
        {"key": "library", "type": "single", "question": "Keep the library open on Sundays?",
         "options": ["Yes", "No", "Not sure"]},
        {"key": "trust", "type": "scale", "question": "How much do you trust the town council?", "low": 1, "high": 7,
         "low_label": "Not at all", "high_label": "Completely"},
        {"key": "pay", "type": "numeric", "question": "Dollars a year you would pay for longer hours?",
         "minimum": 0, "maximum": 200},
        {"key": "used", "type": "multiple", "question": "Which services did you use this year?",
         "options": ["Library", "Bus", "Pool"]},
        {"key": "budget", "type": "ranking", "question": "Rank these for next year's budget.",
         "options": ["Roads", "Schools", "Parks"]},
        {"key": "cut", "type": "single", "vignette": "Imagine the town must close one service next year.",
         "question": "Which would you close?",
         "options": [{"code": 10, "label": "Pool"}, {"code": 20, "label": "Bus"}]},
    ],
}  # fmt: skip
