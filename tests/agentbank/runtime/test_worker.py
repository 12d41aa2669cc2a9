"""A worker killed mid-task: another worker takes the task again, and each result is written once; and a
worker takes a task that needs no model without loading one."""

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.orm import Session

from agentbank.access.principals import Principal
from agentbank.access.scope import ProjectScope
from agentbank.audit import log as audit
from agentbank.db.models import AuditEvent, Client, Job, JobResult
from agentbank.publication.releases import CUT_TASK, request_cut
from agentbank.restricted import projects
from agentbank.restricted.jobs.lifecycle import submit_job
from agentbank.restricted.jobs.requests import SurveyRequest
from tests.support.factories import build, process_keyring
from tests.support.workers import kill_while_blocked, start_worker, worker_env

pytestmark = [pytest.mark.slow, pytest.mark.cli]


def test_killed_worker_leaves_its_task_to_another_and_results_are_written_once(fresh_database):
    engine = create_engine(fresh_database)
    with Session(engine) as session, session.begin():
        keys = process_keyring(fresh_database)  # the worker's, so it can read what is built here
        agents = [build(session, ref=f"file:{n}.json", keys=keys)[1] for n in range(3)]
        client = Client(client_id="cl_team", name="team", secret_hash=b"x" * 48, scopes=["individual:query"])
        session.add(client)
        session.flush()
        member = Principal("client", "cl_team", client.id, frozenset({"projects:apply", "individual:query"}))
        project = projects.apply(
            session, member, projects.Application("Study", "purpose " * 5, "harms " * 5, [], None, ["survey"])
        )
        reviewer = Principal("client", "reviewer", None, frozenset({"review"}))
        grant = ProjectScope.of(None, ["survey"], 10, 100, datetime.now(UTC) + timedelta(days=1))
        projects.decide(session, reviewer, project.id, grant, "ok")
        items = ["cappun", "gunlaw"]
        request = SurveyRequest(kind="survey", agents=[a.id for a in agents], instrument="gss", items=items)
        job_id = submit_job(session, member, project.id, "k1", request, Path("."))[0].id
        agent_ids = sorted(a.id for a in agents)

    # Hold the job's row, so the first worker blocks inside its first task's transaction.
    blocker = engine.connect()
    blocker.execute(text("SELECT 1 FROM jobs WHERE id = :id FOR UPDATE"), {"id": job_id})
    first = start_worker(fresh_database)

    kill_while_blocked(engine, first, blocker)

    second = start_worker(fresh_database, "--burst")
    output, _ = second.communicate(timeout=180)
    assert second.returncode == 0, output

    with Session(engine) as session:
        job = session.get_one(Job, job_id)
        assert (job.status, job.done, job.total) == ("done", 3, 3)
        results = session.scalars(select(JobResult).where(JobResult.job_id == job_id)).all()
        assert sorted(r.agent_id for r in results) == agent_ids
        assert all(len(r.answer_ids) == 2 and r.status == "released" for r in results)
        answered = session.scalar(select(func.count()).where(AuditEvent.action == "job.answer"))
        assert answered == 3
        stuck = session.scalar(text("SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"))
        assert stuck == 0
    engine.dispose()


def test_a_worker_takes_a_task_that_needs_no_model_without_loading_one(fresh_database):
    engine = create_engine(fresh_database)
    with Session(engine) as session, session.begin():
        request_cut(session, audit.Actor("operator", "test"))
    # The worker's process counts the loads of its models (at the bank's opening or later), and says at its
    # end whether the evaluation (the scoring, needed only by its refresh task) was imported.
    code = (
        "import atexit, json, sys\n"
        "from agentbank.runtime.bank import Bank\n"
        "loads, load = [], Bank.load_models\n"
        "Bank.load_models = lambda bank: loads.append(1) or load(bank)\n"
        "atexit.register(lambda: print(json.dumps([len(loads), 'evaluation' in sys.modules])))\n"
        "from app.cli import main\n"
        "sys.argv = ['agentbank', 'worker', '--burst']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=worker_env(fresh_database), capture_output=True,
                          text=True, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, False]
    with engine.connect() as conn:
        status = conn.scalar(text("SELECT status::text FROM procrastinate_jobs WHERE task_name = :t"), {"t": CUT_TASK})
    assert status == "succeeded"
    engine.dispose()
