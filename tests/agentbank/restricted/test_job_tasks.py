"""A job's task as a worker runs it (``restricted.jobs.tasks``): a failed attempt is audited and the last one
ends the agent's part, while an attempt cut short by a stopping worker is no failure at all."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest
from sqlalchemy import func, select

from agentbank.core.errors import ProviderError
from agentbank.db.models import AuditEvent, Job
from agentbank.restricted.jobs.tasks import TaskAttempt, run_task
from tests.app.api.protection import make_team
from tests.support.restricted import apply_and_approve, survey


def gone(messages, schema):
    raise ProviderError("the chat endpoint went away")


def failures(api) -> int:
    return api.session.scalar(select(func.count()).where(AuditEvent.action == "job.attempt_failed"))


def test_a_stopped_attempt_is_no_failure_and_the_last_failed_one_ends_the_agents_part(api):
    team = make_team(api)
    project = apply_and_approve(api, team, quota=20)
    agent = team["agents"][0]
    headers = {**team["member"], "Idempotency-Key": "stopping"}
    body = survey(team, agents=[agent])
    job_id = uuid.UUID(api.client.post(f"/v1/projects/{project}/jobs", json=body, headers=headers).json()["id"])
    team["chat"].script = gone
    stopping = threading.Event()
    stopping.set()
    last = TaskAttempt(before=3, attempts=4)
    with pytest.raises(ProviderError):  # the queue gets the error either way; a stop puts the task back
        run_task(api.bank.sessions, team["door"], job_id, agent.id, Path("."), last, stopping=stopping)
    api.session.expire_all()
    assert failures(api) == 0 and api.session.get_one(Job, job_id).status != "failed"

    with pytest.raises(ProviderError):
        run_task(api.bank.sessions, team["door"], job_id, agent.id, Path("."), last, stopping=threading.Event())
    api.session.expire_all()
    assert failures(api) == 1 and api.session.get_one(Job, job_id).status == "failed"
