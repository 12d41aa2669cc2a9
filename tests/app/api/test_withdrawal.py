"""Withdrawal through the portal: immediate, complete, notified, audited, and nothing readable left."""

import uuid
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from agentbank.audit import log as audit
from agentbank.audit.checkpoints import sign_head
from agentbank.audit.trust import TrustedKeys
from agentbank.audit.verification import verify_log
from agentbank.building.agents import BUILD_TASK, BuildConfig, pending_participants, queue_builds
from agentbank.db.models import (
    Agent,
    AnswerRecord,
    AuditEvent,
    Memory,
    OutboxEvent,
    Participant,
    PopulationAnswer,
    WithheldAnswer,
)
from agentbank.participants.ledger import read_ledger
from tests.app.api.factories import answer, exact_release
from tests.app.api.protection import make_team, open_job
from tests.support.factories import CANARY
from tests.support.restricted import apply_and_approve, queued, run_queued, survey
from tests.support.scans import scan_database


@pytest.fixture
def team(api):
    return make_team(api)


def scan_files(root: Path, needles: list[str]) -> list[str]:
    found = []
    for path in (p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes().decode("latin-1").lower()
        found += [str(path) for needle in needles if needle.lower() in data]
    return found


def test_withdrawal_takes_effect_at_once_and_leaves_nothing_readable(api, team, settings):
    (a1, a2), (p1, _) = team["agents"], team["participants"]
    marker = team["keys"].canary(a1.id)
    project = apply_and_approve(api, team, quota=100)
    headers = {**team["member"], "Idempotency-Key": "first"}
    first = api.client.post(f"/v1/projects/{project}/jobs", json=survey(team), headers=headers).json()["id"]
    open_job(api, team, project, ["Please tell me your lucky charm."], key="leak")
    run_queued(api, team)
    assert api.session.scalar(select(func.count()).select_from(WithheldAnswer)) == 1
    for agent, code in ((a1, 1), (a2, 2)):
        answer(api.session, agent.id, "cappun", code)
    # Queued but not yet run: one task for each agent.
    pending = api.client.post(
        f"/v1/projects/{project}/jobs", json=survey(team, agents=[a1, a2], items=("grass",)),
        headers={**team["member"], "Idempotency-Key": "pending"},
    ).json()["id"]  # fmt: skip
    assert len(queued(api)) == 2
    (settings.data_dir / "exports").mkdir(parents=True, exist_ok=True)
    (settings.data_dir / "exports" / "other.txt").write_text("nothing personal")
    me = api.participant_headers(p1)

    assert api.client.post("/v1/participant/withdraw", json={"confirm": False}, headers=me).status_code == 422
    as_member = api.client.post("/v1/participant/withdraw", json={"confirm": True}, headers=team["member"])
    assert as_member.status_code == 403
    r = api.client.post("/v1/participant/withdraw", json={"confirm": True}, headers=me)
    assert r.status_code == 200, r.text
    assert r.json() == {"status": "withdrawn", "agents": 1, "tasks_cancelled": 1, "projects_notified": 1}

    # A tombstone: no key, no demographics, the agent withdrawn, its key-free rows gone.
    api.session.expire_all()
    tomb = api.session.get(Participant, p1.id)
    assert (tomb.consent, tomb.wrapped_key, tomb.demographics_encrypted) == ("withdrawn", None, None)
    assert api.session.get(Agent, a1.id).status == "withdrawn"
    for model in (Memory, AnswerRecord, PopulationAnswer):
        assert api.session.scalar(select(func.count()).select_from(model).where(model.agent_id == a1.id)) == 0
    assert api.session.scalar(select(WithheldAnswer.status)) == "withdrawn"

    # Queued work for the agent is cancelled and its job still ends; the other agent's task stays.
    statuses = dict(api.session.execute(
        text("SELECT args->>'agent_id', status FROM procrastinate_jobs WHERE args->>'job_id' = :job"), {"job": pending}
    ).all())  # fmt: skip
    assert statuses[str(a1.id)] == "cancelled" and statuses[str(a2.id)] == "todo"
    run_queued(api, team)
    assert api.client.get(f"/v1/jobs/{pending}", headers=team["member"]).json()["status"] == "done"
    results = {r["agent_id"]: r for r in api.client.get(f"/v1/jobs/{pending}/results", headers=team["member"]).json()}
    assert results[str(a1.id)]["status"] == "unavailable" and results[str(a2.id)]["status"] == "released"
    (earlier,) = api.client.get(f"/v1/jobs/{first}/results", headers=team["member"]).json()
    assert earlier["status"] == "unavailable" and earlier["answers"] == []

    # The team is told; the agent is refused from now on and absent from recomputed aggregates.
    (notice,) = api.session.scalars(select(OutboxEvent)).all()
    assert notice.project_id == uuid.UUID(project) and notice.payload["agent_ids"] == [str(a1.id)]
    # The team reads it at its project's notices (reading changes nothing) and marks it read (a POST): the
    # first mark delivers it. Both are audited.
    notices_url = f"/v1/projects/{project}/notices"
    assert api.client.get(notices_url, headers=team["outsider"]).status_code == 404
    (read,) = api.client.get(notices_url, headers=team["member"]).json()
    assert read["agent_ids"] == [str(a1.id)] and "delete the copies" in read["notice"] and not read["first_read_at"]
    assert api.session.get(OutboxEvent, read["id"]).delivered_at is None
    mark = f"{notices_url}/{read['id']}/read"
    assert api.client.post(mark, headers=team["outsider"]).status_code == 404
    marked = api.client.post(mark, headers=team["member"]).json()
    assert marked["first_read_at"]
    (again,) = api.client.get(notices_url, headers=team["pi"]).json()
    assert again["first_read_at"] == marked["first_read_at"]  # delivered once, whoever reads it next
    assert api.client.post(mark, headers=team["pi"]).json()["first_read_at"] == marked["first_read_at"]
    read = select(AuditEvent).where(AuditEvent.action == "project.notices.read").order_by(AuditEvent.id)
    reads = api.session.scalars(read).all()  # in the order they were made
    assert [e.details["unread"] for e in reads] == [1, 0]
    marks = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "project.notice.delivered")).all()
    assert [e.details["first"] for e in marks] == [True, False]
    jobs = api.client.get(f"/v1/projects/{project}/jobs", headers=team["member"]).json()
    assert {j["id"] for j in jobs} >= {first, pending}
    refused = api.client.post(
        f"/v1/projects/{project}/jobs", json=survey(team), headers={**team["member"], "Idempotency-Key": "after"}
    )
    assert refused.status_code == 422 and "not available" in refused.text
    # The open tier shows releases: the next one no longer counts the agent.
    assert exact_release(api.session, k=1).agents == 1
    overall = api.client.get("/v1/open/instruments/gss/items/cappun/distribution",
                             headers=api.token("researcher", "aggregate:read")).json()  # fmt: skip
    assert {c["code"]: c["count"] for c in overall["cells"]} == {1: 0, 2: 1}

    # Never rebuilt.
    config = BuildConfig.of(team["chat"], team["embedder"], 0)
    assert p1.id not in {p.id for p in pending_participants(api.session, config)}
    queue_builds(api.session)
    builds = api.session.execute(
        text("SELECT args->>'participant_id' FROM procrastinate_jobs WHERE task_name = :t"), {"t": BUILD_TASK}
    ).scalars()
    assert str(p1.id) not in set(builds)

    # The portal: the transcript is gone, the trail remains.
    assert api.client.get("/v1/participant/transcript", headers=me).status_code == 410
    assert api.client.get("/v1/participant/me", headers=me).json()["consent"] == "withdrawn"
    trail = api.client.get("/v1/participant/audit", headers=me).json()
    assert trail[-2]["action"] == "participant.withdraw"

    # No plaintext of theirs anywhere: every text, binary and JSON column, every file in the data dir.
    needles = [CANARY, marker, "Zanzibar"]
    assert scan_database(api.session, needles) == []
    assert scan_files(settings.data_dir, needles) == []
    # The scans do find what is there: a project's title, a hash's raw bytes, a file's text.
    audit.sequence(api.session)
    some_hash = api.session.scalar(text("SELECT hash FROM audit_events ORDER BY seq LIMIT 1")).decode("latin-1")
    assert {"projects.title", "audit_events.hash"} <= set(scan_database(api.session, ["Spending", some_hash]))
    assert len(scan_files(settings.data_dir, ["nothing personal"])) == 1

    sign_head(api.session, api.client.app.state.signer)
    assert verify_log(api.session, api.client.app.state.signer.public_key).ok


def test_withdrawing_twice_changes_nothing(api, team, settings):
    me = api.participant_headers(team["participants"][0])
    assert api.client.post("/v1/participant/withdraw", json={"confirm": True}, headers=me).json()["agents"] == 1
    again = api.client.post("/v1/participant/withdraw", json={"confirm": True}, headers=me)
    assert again.status_code == 200 and again.json()["agents"] == 0
    # Written once to the withdrawal ledger outside the database, signed with the audit key, for a restore.
    ledger = read_ledger(settings.withdrawal_ledger_path, TrustedKeys.of(settings))
    assert not ledger.problems and [e.participant_id for e in ledger.entries] == [team["participants"][0].id]
