"""The participant's portal: their audit trail with receipts, their transcript, and nothing of anyone else."""

import pytest
from sqlalchemy import select

from agentbank.audit import log as audit
from agentbank.db.models import AuditEvent
from tests.app.api.factories import answer
from tests.app.api.protection import make_team, open_job
from tests.support.factories import CANARY
from tests.support.restricted import PURPOSE, apply_and_approve, run_queued, survey


@pytest.fixture
def team(api):
    return make_team(api)


def test_the_audit_trail_shows_every_use_with_a_receipt(api, team):
    (a1, a2), (p1, p2) = team["agents"], team["participants"]
    project = apply_and_approve(api, team)
    r = api.client.post(
        f"/v1/projects/{project}/jobs", json=survey(team), headers={**team["member"], "Idempotency-Key": "s"}
    )
    assert r.status_code == 202
    open_job(api, team, project, ["Where did you grow up?", "What is your lucky charm?"], agents=[a2])
    run_queued(api, team)
    answer(api.session, a1.id, "cappun", 1)
    audit.record(api.session, audit.SYSTEM, "population.answer", "open", agent_id=a1.id, participant_id=p1.id,
                 details={"instrument": "gss", "items": ["cappun"]})  # fmt: skip
    audit.sequence(api.session)  # what a running API's or worker's sequencer does within a second

    mine = api.client.get("/v1/participant/audit", headers=api.participant_headers(p1))
    assert mine.status_code == 200
    uses = mine.json()
    answered = next(u for u in uses if u["action"] == "job.answer")
    assert answered["project"]["title"] == "Spending" and answered["project"]["purpose"] == PURPOSE
    assert answered["tier"] == "restricted" and answered["outcome"] == "released"
    assert answered["asked"]["items"] == ["cappun", "gunlaw"] and answered["asked"]["instrument"] == "gss"
    assert any(u["outcome"] == "aggregate" for u in uses)
    # The receipt is the event as chained in the log, so a signed checkpoint covers it.
    event = api.session.scalars(select(AuditEvent).where(AuditEvent.seq == answered["receipt"]["seq"])).one()
    assert event.hash.hex() == answered["receipt"]["hash"] == audit.event_hash(event.prev_hash, event).hex()
    assert event.agent_id == a1.id

    theirs = api.client.get("/v1/participant/audit", headers=api.participant_headers(p2)).json()
    their_answer = next(u for u in theirs if u["action"] == "job.answer")
    assert their_answer["outcome"] == "withheld"
    assert [len(h) for h in their_answer["asked"]["question_sha256"]] == [64, 64]
    assert "lucky" not in str(theirs)  # the team's wording is shown only as a hash
    # Neither sees the other's events.
    assert not {u["receipt"]["seq"] for u in uses} & {u["receipt"]["seq"] for u in theirs}
    seen_by_p1 = api.session.scalars(
        select(AuditEvent).where(AuditEvent.seq.in_([u["receipt"]["seq"] for u in uses]))
    ).all()
    assert all(e.participant_id in (p1.id, None) and e.agent_id in (a1.id, None) for e in seen_by_p1)
    assert str(a2.id) not in mine.text and str(p2.id) not in mine.text


def test_a_participant_downloads_only_their_own_transcript(api, team):
    (p1, p2) = team["participants"]
    mine = api.client.get("/v1/participant/transcript", headers=api.participant_headers(p1))
    theirs = api.client.get("/v1/participant/transcript", headers=api.participant_headers(p2))
    assert mine.status_code == theirs.status_code == 200
    assert mine.headers["content-type"].startswith("text/plain") and "attachment" in mine.headers["content-disposition"]
    assert mine.text.count("\n") == 24 and theirs.text.count("\n") == 8  # 12 and 4 questions, each answered
    assert mine.text.startswith("[1] Interviewer: Question 0") and CANARY in mine.text
    assert mine.text != theirs.text
    reads = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "participant.transcript.read")).all()
    assert {e.participant_id for e in reads} == {p1.id, p2.id}
    assert api.client.get("/v1/participant/transcript", headers=team["member"]).status_code == 403
