"""Every route called as every principal, against the checked-in table of expected statuses.

A route missing from the table fails the test, so no route ships without a decision on who may call it.
"""

import csv
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from agentbank.access.principals import Principal
from agentbank.access.scope import ProjectScope
from agentbank.audit import log as audit
from agentbank.audit.checkpoints import sign_head
from agentbank.db.models import Client, Participant
from agentbank.restricted import projects
from agentbank.restricted.jobs.lifecycle import submit_job
from agentbank.restricted.jobs.requests import SurveyRequest
from agentbank.studies import setup
from agentbank.studies.completion import CompletionCodes
from interviewer.session.script import load_script
from tests.app.api.factories import exact_release, population

MATRIX = Path(__file__).with_name("authorization_matrix.csv")
# Every kind of principal: anonymous, an open-tier client, a team member and one of another team, a reviewer,
# the operator, two participants, the coordinator of the study in the paths and one of another study.
PRINCIPALS = ("anonymous", "researcher", "member_a", "member_b", "reviewer", "admin", "participant", "participant_b",
              "coordinator", "coordinator_b")  # fmt: skip
DOC_ROUTES = {("GET", "/openapi.json"), ("GET", "/docs"), ("GET", "/docs/oauth2-redirect"), ("GET", "/redoc")}
PURPOSE = "A study of how agents answer questions about spending."
STUDY_BODIES = {
    "/v1/studies": {"name": "Matrix study", "target_size": 10, "expires_at": "2099-01-01T00:00:00Z"},
    "/v1/studies/{study_id}/invitations": {"count": 2},
    "/v1/studies/{study_id}/revocations": {},
    "/v1/studies/{study_id}/outcomes": {"outcomes": [{"panel_participant_id": "5f00a1", "outcome": "returned"}]},
    "/v1/participant/contact": {"email": "someone@example.org"},
}


def matrix() -> dict[tuple[str, str], dict[str, int]]:
    with MATRIX.open() as handle:
        return {(r["method"], r["path"]): {p: int(r[p]) for p in PRINCIPALS} for r in csv.DictReader(handle)}


def app_routes(app) -> set[tuple[str, str]]:
    paths = app.openapi()["paths"]
    return {(method.upper(), path) for path, operations in paths.items() for method in operations} | DOC_ROUTES


@pytest.fixture
def world(api):
    headers = {
        "anonymous": {},
        "researcher": api.token("researcher", "aggregate:read", "projects:apply"),
        "member_a": api.token("member_a", "individual:query", "projects:apply"),
        "member_b": api.token("member_b", "individual:query", "projects:apply"),
        "reviewer": api.token("reviewer", "review"),
        "admin": api.token("admin", "admin"),
    }
    agents = population(api.session, [({"sex": 1}, 1)] * 3)
    participant = api.session.get(Participant, agents[0].participant_id)
    headers["participant"] = api.participant_headers(participant)
    headers["participant_b"] = api.participant_headers(api.session.get(Participant, agents[1].participant_id))

    def approved_project(member: str) -> tuple[uuid.UUID, Principal]:
        pk = api.session.scalars(select(Client.id).where(Client.client_id == headers[member]["X-Client-Id"])).one()
        applicant = Principal(
            "client", headers[member]["X-Client-Id"], pk, frozenset({"projects:apply", "individual:query"})
        )
        project = projects.apply(
            api.session, applicant, projects.Application(f"Project {member}", PURPOSE, PURPOSE, [], None, ["survey"])
        )
        reviewer = Principal("client", "reviewer-x", None, frozenset({"review"}))
        grant = ProjectScope.of(None, ["survey"], 10, 1000, datetime.now(UTC) + timedelta(days=30))
        projects.decide(api.session, reviewer, project.id, grant, "ok")
        return project.id, applicant

    project_a, member_a = approved_project("member_a")
    project_b, _ = approved_project("member_b")
    request = SurveyRequest(kind="survey", agents=[agents[0].id], instrument="gss", items=["cappun"])
    job, _ = submit_job(api.session, member_a, project_a, "setup", request, Path("."))
    exact_release(api.session, k=2)
    sign_head(api.session, api.client.app.state.signer)
    headers["coordinator"] = api.token("coordinator", "studies")
    headers["coordinator_b"] = api.token("coordinator_b", "studies")
    coordinator = headers["coordinator"]["X-Client-Id"]
    owner = api.session.scalars(select(Client.id).where(Client.client_id == coordinator)).one()
    script = load_script()
    now = datetime.now(UTC)
    plan = setup.StudyPlan("Matrix cohort", script.key, script.version, 10, now + timedelta(days=30),
                           completion_url="https://panel.example/done?cc={code}",
                           completion_codes=CompletionCodes.PER_PARTICIPANT)  # fmt: skip
    study = setup.create_study(api.session, plan, audit.Actor("client", "coordinator"), now, owner_pk=owner)
    published = api.client.app.state.open_reads.published.current().entry("gss", "cappun", (), "json")
    return {"headers": headers, "project_a": project_a, "project_b": project_b, "job_a": job.id, "agents": agents,
            "study": study.id, "file": f"{published.sha256}.json"}  # fmt: skip


def call(api, world, method, path, principal):
    url = (
        path.replace("/proof/{seq}", "/proof/1").replace("/consistency", "/consistency?first=1&second=2")
        .replace("{instrument}", "gss").replace("{item}", "cappun")
        .replace("{project_id}", str(world["project_a"])).replace("{job_id}", str(world["job_a"]))
        .replace("{turn}", "2").replace("{seq}", "0")
        .replace("{key}", "gss:cappun").replace("{notice_id}", "1")
        .replace("{study_id}", str(world.get("study", uuid.UUID(int=0))))
        .replace("{name}", world.get("file", "0" * 64 + ".json")).replace("{group_id}", str(uuid.UUID(int=1)))
    )  # fmt: skip
    headers = {k: v for k, v in world["headers"][principal].items() if k == "Authorization"}
    body = None
    if path == "/v1/projects":
        body = {"title": "New study", "purpose": PURPOSE, "harms": PURPOSE, "query_types": ["survey"]}
    elif path.endswith("/decision"):
        body = {"approve": False, "note": "no"}
    elif path.endswith("/membership"):
        body = {"accept": True}
    elif path.endswith("/instruments"):
        item = {"key": "q1", "type": "single", "question": "Do you agree?", "options": ["Yes", "No"]}
        body = {"key": "policy", "format": "json", "content": json.dumps({"title": "Policy", "items": [item]})}
    elif path.endswith("/jobs"):
        body = {"kind": "survey", "instrument": "gss", "items": ["gunlaw"], "agents": [str(world["agents"][1].id)]}
        headers["Idempotency-Key"] = f"matrix-{principal}"
    elif path.endswith("/focus-groups"):  # project A is approved for surveys only: out of its scope
        body = {"seats": [str(a.id) for a in world["agents"][:2]], "stimulus": {"text": "A garden."},
                "guide": {"topics": [{"title": "Plan", "questions": ["First reaction?"]}]}}  # fmt: skip
        headers["Idempotency-Key"] = f"matrix-{principal}"
    elif path == "/v1/admin/population":
        body = {"instrument": "gss", "items": ["cappun"]}
    elif path == "/v1/admin/releases":
        body = {}  # a release follows its policy: nothing can be forced over HTTP
    elif path in STUDY_BODIES:
        body = STUDY_BODIES[path]
    elif path.startswith("/v1/participant/battery/"):  # an answer of wave 1; closing it with most unanswered
        body = {"wave": 1, "value": 1}
    if method == "POST" and path.startswith("/oauth/"):
        return api.client.post(url, data={"grant_type": "client_credentials", "token": "x"}, headers=headers)
    return api.client.request(method, url, json=body, headers=headers)


OTHERS = {
    "member_b": lambda path: "{" in path and not path.startswith("/v1/audit/") and "{study_id}" not in path,
    "coordinator_b": lambda path: "{study_id}" in path,
}


def test_every_route_is_in_the_matrix(api):
    assert app_routes(api.client.app) == set(matrix())


def test_every_route_as_every_principal(api, world):
    failures = []
    for (method, path), expected in matrix().items():
        for principal in PRINCIPALS:
            response = call(api, world, method, path, principal)
            if response.status_code != expected[principal]:
                failures.append(
                    f"{method} {path} as {principal}: {response.status_code}, expected {expected[principal]}"
                )
            # A parameter names another's object: project A's (except on the audit log's public routes: hashes
            # only) to member_b, the study of coordinator to coordinator_b.
            if principal in OTHERS and OTHERS[principal](path) and response.status_code < 400:
                failures.append(f"{method} {path} returned what is not theirs to {principal}")
            if response.status_code >= 400 and "html" not in response.headers.get("content-type", ""):
                assert "error" in response.json()
    assert not failures, "\n".join(failures)


def test_a_coordinator_reaches_its_study_and_nothing_private_besides():
    """A coordinator reads no transcript, no answer, no contact detail, no project: outside the studies' routes
    it gets only what anyone gets, and its own sign-in."""
    own_session = {("GET", "/v1/session"), ("POST", "/signout")}
    for (method, path), expected in matrix().items():
        if path.startswith("/v1/studies"):
            assert expected["coordinator"] < 300 and (expected["coordinator_b"] >= 400) == ("{" in path), path
        elif (method, path) not in own_session:
            for coordinator in ("coordinator", "coordinator_b"):
                assert expected[coordinator] >= 400 or expected["anonymous"] < 400, (method, path)
