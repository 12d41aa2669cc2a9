"""A job whose tasks fail every attempt ends, says why, gives its quota back, and every attempt is audited."""

from __future__ import annotations

import uuid
from pathlib import Path

import procrastinate
import pytest
from pydantic import SecretStr
from sqlalchemy import select

from agentbank.core.errors import ProviderError
from agentbank.db.models import AuditEvent, Job, JobResult, Project
from agentbank.providers.fakes import ScriptedChatModel
from agentbank.restricted.jobs.lifecycle import JOB_QUEUE, JOB_TASK, fail_job_task, run_job_task
from agentbank.runtime.bank import Bank
from agentbank.runtime.worker import ATTEMPTS, Worker
from tests.app.api.protection import make_team
from tests.support.restricted import apply_and_approve, queued, survey


def gone(messages, schema):
    raise ProviderError("the chat endpoint went away")


def attempt(n: int) -> procrastinate.jobs.Job:
    return procrastinate.jobs.Job(id=1, queue=JOB_QUEUE, lock=None, queueing_lock=None, task_name=JOB_TASK, attempts=n)


@pytest.fixture
def team(api):
    return make_team(api)


def test_a_job_failing_every_attempt_ends_failed_and_returns_its_quota(api, team, database_url):
    project = apply_and_approve(api, team, quota=20)
    a1, a2 = team["agents"]
    headers = {**team["member"], "Idempotency-Key": "doomed"}
    body = survey(team, agents=[a1, a2])
    job_id = uuid.UUID(api.client.post(f"/v1/projects/{project}/jobs", json=body, headers=headers).json()["id"])
    assert api.session.get(Project, uuid.UUID(project)).quota_used == 4  # 2 agents x 2 items
    settings = api.bank.settings.model_copy(update={"database_url": SecretStr(database_url)})
    bank = Bank(settings, api.bank.engine, api.bank.sessions, api.bank.keys, ScriptedChatModel(gone),
                team["embedder"])  # fmt: skip
    worker = Worker(bank)
    tasks = [(uuid.UUID(args["job_id"]), uuid.UUID(args["agent_id"])) for _, args in queued(api)]
    for n in range(ATTEMPTS):
        for job, agent in tasks:
            with pytest.raises(ProviderError):
                worker._run_job(attempt(n), job, agent)

    api.session.expire_all()
    job = api.session.get_one(Job, job_id)
    assert (job.status, job.done) == ("failed", 2) and job.finished_at is not None
    assert api.session.get(Project, uuid.UUID(project)).quota_used == 0
    assert set(api.session.scalars(select(JobResult.status).where(JobResult.job_id == job_id))) == {"failed"}
    failed = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "job.attempt_failed")).all()
    assert len(failed) == 2 * ATTEMPTS and {e.agent_id for e in failed} == {a1.id, a2.id}
    assert all(e.details["reason"] == "the chat endpoint went away" for e in failed)
    ended = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "job.failed")).all()
    assert len(ended) == 2 and all(e.details["quota_returned"] == 2 for e in ended)
    results = api.client.get(f"/v1/jobs/{job_id}/results", headers=team["member"]).json()
    assert [r["status"] for r in results] == ["failed", "failed"]
    assert api.client.get(f"/v1/jobs/{job_id}", headers=team["member"]).json()["status"] == "failed"


def test_a_job_with_some_agents_failed_is_partial(api, team):
    project = apply_and_approve(api, team, quota=20)
    a1, a2 = team["agents"]
    headers = {**team["member"], "Idempotency-Key": "half"}
    body = survey(team, agents=[a1, a2])
    job_id = uuid.UUID(api.client.post(f"/v1/projects/{project}/jobs", json=body, headers=headers).json()["id"])
    assert run_job_task(api.bank.sessions, team["door"], job_id, a1.id, Path("."))
    assert fail_job_task(api.session, job_id, a2.id, "the chat endpoint went away")
    assert not fail_job_task(api.session, job_id, a2.id, "again")  # written once
    api.session.expire_all()
    assert api.session.get_one(Job, job_id).status == "partial"
    assert api.session.get(Project, uuid.UUID(project)).quota_used == 2


def test_a_retried_job_task_asks_only_for_the_answers_its_failed_attempt_did_not_make(api, team):
    project = apply_and_approve(api, team, quota=20)
    a1, _ = team["agents"]
    chat = team["chat"]
    headers = {**team["member"], "Idempotency-Key": "resumed"}
    body = survey(team, agents=[a1], items=("cappun", "gunlaw", "grass"))
    job_id = uuid.UUID(api.client.post(f"/v1/projects/{project}/jobs", json=body, headers=headers).json()["id"])
    script = chat.script

    def second_fails(messages, schema):
        return ProviderError("the endpoint went away") if len(chat.calls) == 2 else script(messages, schema)

    chat.script = second_fails
    with pytest.raises(ProviderError):
        run_job_task(api.bank.sessions, team["door"], job_id, a1.id, Path("."))
    chat.script, asked = script, len(chat.calls)
    assert run_job_task(api.bank.sessions, team["door"], job_id, a1.id, Path("."))  # the retry
    # The first attempt made one answer and failed at its second call; the retry asks for the other two.
    assert (asked, len(chat.calls) - asked) == (2, 2)
    api.session.expire_all()
    assert api.session.get_one(Job, job_id).status == "done"
