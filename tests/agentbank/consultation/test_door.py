"""The one door: every path to a bank agent's answer checks, answers and audits in one place."""

from __future__ import annotations

import ast
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, event, func, select

from agentbank.consultation.answering import AgentUnavailableError
from agentbank.consultation.door import POPULATION, Grant
from agentbank.core.errors import PermissionDeniedError
from agentbank.core.statuses import ConsentStatus, ProjectStatus
from agentbank.db import make_sessionmaker
from agentbank.db.models import AuditEvent, Participant, Project
from agentbank.instruments import load_instrument, select_items
from agentbank.providers.fakes import ScriptedChatModel
from agentbank.publication.population import fill_agent
from tests.app.api.protection import make_team, open_job
from tests.support.answers import bank_of
from tests.support.factories import responder
from tests.support.restricted import apply_and_approve, run_queued, survey

ROOT = Path(__file__).resolve().parents[3]
GSS = load_instrument("gss", Path("."))

# Every code path that produces an answer of a bank agent, and the audit action it leaves. The command
# line's paths (ask, survey, demo) are walked in tests/app/cli/test_door.py, the evaluation's in
# tests/evaluation/runs/test_runs.py; the worker's build answers for the open tier through ``fill_agent``.
PATHS = {
    "a team's survey job (worker)": "job.answer",
    "a team's open-question job (worker)": "job.answer",
    "the population job, and a build's open-tier answers (worker)": "population.answer",
}


def events(session, action: str) -> list[AuditEvent]:
    return list(session.scalars(select(AuditEvent).where(AuditEvent.action == action).order_by(AuditEvent.seq)))


def test_only_the_door_calls_the_engine():
    callers = []
    for package in ("agentbank", "app", "interviewer", "evaluation"):
        for path in (ROOT / package).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith("agentbank/consultation/answering/") or relative == "agentbank/consultation/door.py":
                continue
            tree = ast.parse(path.read_text())
            names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
            if "AnswerEngine" in names:
                callers.append(relative)
    assert callers == []


@pytest.fixture
def team(api):
    return make_team(api)


def test_every_path_to_an_answer_is_audited_once_per_agent(api, team):
    a1, a2 = team["agents"]
    project = apply_and_approve(api, team, quota=100)
    before = {action: len(events(api.session, action)) for action in set(PATHS.values())}

    headers = {**team["member"], "Idempotency-Key": "door-survey"}
    body = survey(team, agents=[a1, a2])
    assert api.client.post(f"/v1/projects/{project}/jobs", json=body, headers=headers).status_code == 202
    assert run_queued(api, team) == 2
    open_job(api, team, project, ["Where did you grow up?", "What do you do on Sundays?"], agents=[a2], key="o")
    assert run_queued(api, team) == 1
    for agent in (a1, a2):
        assert fill_agent(api.bank.sessions, team["door"], agent.id, GSS, select_items(GSS, ["cappun"]))

    jobs = events(api.session, "job.answer")[before["job.answer"] :]
    assert [e.agent_id for e in jobs] == [a1.id, a2.id, a2.id]  # one event per agent answered, per job
    assert all(e.details["purpose"] and e.project_id == uuid.UUID(project) for e in jobs)
    assert jobs[2].details["kind"] == "open" and len(jobs[2].details["question_sha256"]) == 2
    assert "Sundays" not in str(jobs[2].details)  # the wording stays out of the log
    population = events(api.session, "population.answer")[before["population.answer"] :]
    assert [e.agent_id for e in population] == [a1.id, a2.id]
    assert {e.details["purpose"] for e in population} == {POPULATION.purpose}


def test_the_door_refuses_withdrawn_agents_and_lapsed_projects(api, team):
    a1, a2 = team["agents"]
    door, items = team["door"], select_items(GSS, ["cappun"])
    project = apply_and_approve(api, team, quota=100, agents=[str(a1.id)])
    grant = Grant.job(uuid.UUID(project), uuid.uuid4())
    p1 = api.session.get_one(Participant, a1.participant_id)
    counted = api.session.scalar(select(func.count()).select_from(AuditEvent))
    sessions = api.bank.sessions
    with pytest.raises(PermissionDeniedError, match="outside the project's approved subset"):
        door.survey(sessions, grant, a2.id, GSS, items)
    row = api.session.get_one(Project, uuid.UUID(project))
    row.scope = {**row.scope, "expires_at": "2020-01-01T00:00:00+00:00"}
    api.session.flush()
    with pytest.raises(PermissionDeniedError, match="has expired"):
        door.survey(sessions, grant, a1.id, GSS, items)
    row.status = ProjectStatus.REJECTED  # no status of a project but "approved" lets its jobs answer
    api.session.flush()
    with pytest.raises(PermissionDeniedError, match="no longer approved"):
        door.survey(sessions, grant, a1.id, GSS, items)
    p1.consent = ConsentStatus.WITHDRAWN
    api.session.flush()
    with pytest.raises(AgentUnavailableError):
        door.survey(sessions, Grant.operator("a check"), a1.id, GSS, items)
    assert api.session.scalar(select(func.count()).select_from(AuditEvent)) == counted  # nothing was answered
    assert team["chat"].calls == []


def test_the_door_asks_a_projects_own_instrument_only_in_its_approved_version(api, team):
    from agentbank.instruments.team import checked, to_instrument

    a1, _ = team["agents"]
    spec = checked({"title": "Town", "items": [{"key": "bus", "type": "single", "question": "Bus?",
                                                "options": ["Yes", "No"]}]})  # fmt: skip
    project = apply_and_approve(api, team, quota=100)  # its scope names no instrument of its own
    own = to_instrument("town@1", spec, "test")
    counted = api.session.scalar(select(func.count()).select_from(AuditEvent))
    for grant in (POPULATION, Grant.operator("a check"), Grant.job(uuid.UUID(project), uuid.uuid4())):
        with pytest.raises(PermissionDeniedError, match=r"own instrument|not approved for instrument town@1"):
            team["door"].survey(api.bank.sessions, grant, a1.id, own, own.items)
        with pytest.raises(PermissionDeniedError):
            team["door"].planned_calls(api.bank.sessions, grant, a1.id, own, own.items)
    assert api.session.scalar(select(func.count()).select_from(AuditEvent)) == counted
    assert team["chat"].calls == []


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    """The statements ``engine`` sends meanwhile."""
    sent: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        sent.append(" ".join(statement.split()))

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_a_population_task_syncs_the_instrument_once_and_checks_each_answer_on_columns_alone(fresh_database):
    engine = create_engine(fresh_database)
    sessions = make_sessionmaker(engine)
    door, _, built = bank_of(sessions, ScriptedChatModel(responder), agents=3)
    items = select_items(GSS, ["cappun", "gunlaw", "grass", "abany"])
    tasks = []
    for _, agent_id in built:
        with statements(engine) as sent:
            assert fill_agent(sessions, door, agent_id, GSS, items)
        tasks.append(sent)
    engine.dispose()

    def syncs(sent: list[str]) -> int:
        return sum(s.startswith("INSERT INTO instruments") or "FROM items" in s for s in sent)

    # The first task stores the version, the second finds it committed and keeps its ids; none syncs after.
    assert syncs(tasks[0]) > 0 and syncs(tasks[1]) > 0 and syncs(tasks[2]) == 0
    for sent in tasks:
        admissions = [s for s in sent if "FROM agents JOIN participants" in s and "FOR SHARE OF participants" in s]
        # The plan's and the release's read the rows; each answer stored is checked (and the participant
        # held) again, on the status columns alone, in one statement.
        assert len(admissions) == len(items) + 2
        assert sum("persona_encrypted" in s for s in admissions) == 2
        assert sum(s.startswith("INSERT INTO answers") for s in sent) == len(items)
        assert not [s for s in sent if "FROM participants" in s and s not in admissions]  # nothing read twice
