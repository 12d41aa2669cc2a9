"""Every read of personal data records its audit event itself, in the caller's transaction, whoever calls it:
here each domain read is called directly, as another entry point (a command, a worker, a script) would,
and the event is there without any router's help."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from agentbank.access.principals import Principal
from agentbank.access.scope import ProjectScope
from agentbank.audit.log import Actor
from agentbank.audit.signing_keys import load_signer
from agentbank.core.settings import Settings
from agentbank.db.models import AuditEvent, Client
from agentbank.instruments import load_instrument
from agentbank.participants import portal
from agentbank.participants.battery import answers, battery_of
from agentbank.publication.shelf import Shelf, publish
from agentbank.restricted import projects
from agentbank.restricted.jobs import activity, results
from agentbank.restricted.jobs.lifecycle import submit_job
from agentbank.restricted.jobs.requests import SurveyRequest
from tests.app.api.factories import exact_release, population
from tests.support.factories import SECRET, build, keyring

SOMEONE = Actor("operator", "a-script")
REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


def events(db, action: str) -> list[AuditEvent]:
    return list(db.scalars(select(AuditEvent).where(AuditEvent.action == action)))


@pytest.fixture
def person(db):
    participant, agent, *_ = build(db, ref=f"file:{uuid.uuid4().hex}.json")
    return participant, agent


def test_a_participants_own_reads_are_audited_by_the_domain(db, person):
    participant, _ = person
    keys = keyring()
    portal.profile(db, participant.id, SOMEONE)
    portal.uses_of_agent(db, participant.id, SOMEONE)
    portal.transcript_text(db, keys, participant.id, SOMEONE)
    battery, now = battery_of(Settings()), datetime.now(UTC)
    first = battery.keys(1)[0]
    answers.state(db, keys, participant.id, battery, now, actor=SOMEONE)
    answers.save_answer(db, keys, participant.id, battery, 1, first, None, now, actor=SOMEONE)
    for key in battery.keys(1)[1:]:
        answers.save_answer(db, keys, participant.id, battery, 1, key, None, now, actor=SOMEONE)
    answers.complete(db, keys, participant.id, battery, 1, now, timedelta(days=14), actor=SOMEONE)
    answers.waves_of(db, keys, participant.id, actor=SOMEONE, purpose="scoring")
    read = ("participant.view", "participant.audit.read", "participant.transcript.read", "participant.battery.read")
    for action in (*read, "participant.battery.answer", "participant.battery.complete"):
        found = events(db, action)
        assert found and all(e.actor_id == SOMEONE.id and e.participant_id == participant.id for e in found), action
    assert next(e.details for e in events(db, "participant.battery.answer")) == {"wave": 1, "items": [first]}
    assert any(e.details.get("purpose") == "scoring" for e in events(db, "participant.battery.read"))


def test_a_teams_reads_are_audited_by_the_domain(db, person):
    _, agent = person
    client = Client(client_id="pi-x", name="PI", secret_hash=b"x", scopes=["projects:apply", "individual:query"])
    db.add(client)
    db.flush()
    team = Principal("client", "pi-x", client.id, frozenset({"projects:apply", "individual:query"}))
    project = projects.apply(db, team, projects.Application("Study", "why", "none", [], None, ["survey"]))
    reviewer = Principal("client", "reviewer-x", None, frozenset({"review"}))
    until = datetime.now(UTC) + timedelta(days=3)
    projects.decide(db, reviewer, project.id, ProjectScope.of(None, ["survey"], 5, 100, until), "ok")
    request = SurveyRequest(kind="survey", agents=[agent.id], instrument="gss", items=["cappun"])
    job, _ = submit_job(db, team, project.id, "k", request, REFERENCE)
    projects.read_project(db, team, project.id)
    activity.project_agents_with_cards(db, keyring(), team, project.id)
    activity.project_jobs(db, team, project.id)
    activity.project_notices(db, team, project.id)
    results.read_job(db, team, job.id)
    results.job_results(db, team, job.id, keyring())
    read = ("project.read", "project.agents.list", "project.jobs.list", "project.notices.read", "job.read")
    for action in (*read, "job.results.read"):
        found = events(db, action)
        assert found and all(e.actor_id == "pi-x" and e.project_id == project.id for e in found), action


def test_a_release_tells_each_member_and_its_publication_is_audited_by_the_domain(db, tmp_path):
    # Reading a published table uses no agent and writes nothing (DESIGN §5); the cut tells each member once.
    agents = population(db, [({"sex": 1}, 1)] * 12)
    cut = exact_release(db)
    told = events(db, "release.member")
    assert sorted(e.agent_id for e in told) == sorted(a.id for a in agents)
    assert all(e.details["release"] == cut.id and e.tier == "open" for e in told)
    settings = Settings(secret_key=SECRET, data_dir=tmp_path)
    instruments = lambda key: load_instrument(key, REFERENCE)  # noqa: E731
    publish(db, cut.id, Shelf(tmp_path / "releases"), load_signer(settings), instruments, REFERENCE)
    (published,) = events(db, "release.published")
    assert published.details["release"] == cut.id and published.details["manifest_sha256"] == cut.manifest_sha256
