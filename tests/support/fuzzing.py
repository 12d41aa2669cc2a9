"""Shared helpers of the tests (moved from ``tests.app.api.test_header_fuzz``)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from agentbank.audit import log as audit
from app.api.interviews.dependencies import get_services
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from interviewer.session import invitations
from tests.app.api.protection import make_team
from tests.support.interviews import interviewer_model
from tests.support.restricted import apply_and_approve

# One valid body per route that takes JSON (none of them destructive: a withdrawal unconfirmed).
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/v1/projects"): {"title": "Spending", "purpose": "p" * 30, "harms": "h" * 30, "members": [],
                               "query_types": ["survey"]},
    ("POST", "/v1/projects/{project_id}/decision"): {"approve": False, "note": "not now"},
    ("POST", "/v1/projects/{project_id}/membership"): {"accept": False},
    ("POST", "/v1/projects/{project_id}/instruments"): {"key": "policy", "format": "csv", "title": "Policy",
                                                        "content": "key,type,question\nq1,numeric,How many?\n"},
    ("POST", "/v1/projects/{project_id}/jobs"): {"kind": "open", "questions": ["Where did you grow up?"],
                                                 "agents": ["{agent}"]},
    ("POST", "/v1/projects/{project_id}/focus-groups"): {
        "kind": "focus_group", "seats": ["{agent}", "{agent2}"], "stimulus": {"kind": "concept", "text": "A garden."},
        "guide": {"topics": [{"title": "The plan", "questions": ["What do you think of it?"]}], "probes": ["Why?"],
                  "max_turns": 4, "probes_per_question": 1}},
    ("POST", "/v1/admin/population"): {"instrument": "gss", "items": ["cappun"]},
    ("POST", "/v1/admin/releases"): {"force": False},
    ("POST", "/v1/participant/withdraw"): {"confirm": False},
    ("PUT", "/v1/participant/battery/answers/{key}"): {"wave": 1, "value": 1},
    ("POST", "/v1/participant/battery/complete"): {"wave": 1},
    ("POST", "/v1/interviews"): {"invite": "an-invitation-code", "consent": {"recording": True, "use": True,
                                                                            "withdrawal": True}},
    ("POST", "/v1/interviews/current/answer"): {"text": "I grew up by the river."},
    ("POST", "/v1/interviews/current/finish"): {"redactions": [{"position": 1, "text": "redacted"}], "confirm": False},
    ("POST", "/v1/review/withheld/{withheld_id}"): {"decision": "keep", "note": "fine"},
    ("PUT", "/v1/participant/contact"): {"email": "someone@example.org"},
    ("POST", "/v1/studies"): {"name": "Fuzzed", "target_size": 10, "expires_at": "2099-01-01T00:00:00Z"},
    ("POST", "/v1/studies/{study_id}/invitations"): {"count": 2},
    ("POST", "/v1/studies/{study_id}/revocations"): {"invitations": [1]},
    ("POST", "/v1/studies/{study_id}/outcomes"): {"outcomes": [{"panel_participant_id": "5f00a1",
                                                                 "outcome": "returned"}]},
}  # fmt: skip


@pytest.fixture
def world(api, monkeypatch) -> dict[str, Any]:
    """A team with an approved project, a participant, and an interview under way."""
    team = make_team(api)
    project = apply_and_approve(api, team, quota=1000)
    services = Services(keys=api.bank.keys, chat=interviewer_model(), transcriber=FakeTranscriber())
    api.client.app.dependency_overrides[get_services] = lambda: services
    code = invitations.create_invitation(api.session, audit.Actor("operator", "test"))
    api.session.commit()
    consent = {"recording": True, "use": True, "withdrawal": True}
    started = api.client.post("/v1/interviews", json={"invite": code, "consent": consent})
    assert started.status_code == 201, started.text
    everyone = api.token("everyone", "aggregate:read", "projects:apply", "individual:query", "review", "admin",
                         "studies")  # fmt: skip
    # A study of that client's: another's would be not found before its body is read.
    study = api.client.post("/v1/studies", headers=everyone, json={
        "name": "Fuzzed cohort", "target_size": 5, "expires_at": "2099-01-01T00:00:00Z"})  # fmt: skip
    assert study.status_code == 201, study.text
    yield {
        "path": {"project_id": project, "job_id": str(uuid.uuid4()), "withheld_id": "1", "instrument": "gss",
                 "item": "cappun", "turn": "1", "seq": "0", "key": "gss:cappun", "notice_id": "1",
                 "name": "0" * 64 + ".json", "study_id": study.json()["id"], "group_id": str(uuid.uuid4())},
        "agent": str(team["agents"][0].id), "agent2": str(team["agents"][1].id),
        "client": everyone,
        "participant": api.participant_headers(team["participants"][0]),
        "interviewee": {"Authorization": f"Bearer {started.json()['token']}"},
    }  # fmt: skip
    api.client.app.dependency_overrides.clear()


def _fill(value: Any, world: dict[str, Any]) -> Any:
    return json.loads(json.dumps(value).replace("{agent}", world["agent"]).replace("{agent2}", world["agent2"]))


def _who(path: str, world: dict[str, Any]) -> dict[str, str]:
    if path.startswith("/v1/participant"):
        return world["participant"]
    if path.startswith("/v1/interviews/current"):
        return world["interviewee"]
    return world["client"]


SURROGATE = "\ud800"


def with_each_text_broken(body):
    """The body once per string in it, that string replaced by a lone surrogate."""
    if isinstance(body, str):
        yield SURROGATE
    elif isinstance(body, dict):
        for key, value in body.items():
            for broken in with_each_text_broken(value):
                yield {**body, key: broken}
    elif isinstance(body, list):
        for n, value in enumerate(body):
            for broken in with_each_text_broken(value):
                yield [*body[:n], broken, *body[n + 1 :]]


# A valid body of each kind of job, for the fields only that kind has (the documented body is an open job).
KINDS = {
    "experiment": {"kind": "experiment", "experiment": "schilke", "agents": ["{agent}"]},
    "survey": {"kind": "survey", "instrument": "gss", "items": ["cappun"], "agents": ["{agent}"]},
    "open": {"kind": "open", "questions": ["Where did you grow up?"], "agents": ["{agent}"]},
}


Path = tuple[str | int, ...]


def _resolve(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _put(body: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = list(body) if isinstance(body, list) and body else [None]
        items[0] = _put(items[0], rest, value)
        return items
    container = dict(body) if isinstance(body, dict) else {}
    container[head] = _put(container.get(head), rest, value)
    return container
