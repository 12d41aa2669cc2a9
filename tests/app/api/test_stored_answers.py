"""One reader of stored answers: a job's results cost the same few queries however many agents answered."""

import uuid

from sqlalchemy import event, select

from agentbank.access.principals import Principal
from agentbank.db.models import Client, Job
from agentbank.restricted.jobs.results import job_results
from tests.app.api.protection import make_team
from tests.support.restricted import apply_and_approve, run_queued, survey


def statements(session, read) -> tuple[int, object]:
    seen: list[str] = []
    engine = session.get_bind()

    def count(_conn, _cursor, statement, *_args) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        result = read()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return len(seen), result


def test_job_results_read_every_answer_in_one_query(api):
    team = make_team(api, turns=(6, 4))
    project = apply_and_approve(api, team)
    jobs = []
    for key, agents in (("one", team["agents"][:1]), ("two", team["agents"])):
        r = api.client.post(f"/v1/projects/{project}/jobs", json=survey(team, agents),
                            headers={**team["member"], "Idempotency-Key": key})  # fmt: skip
        assert r.status_code == 202, r.text
        jobs.append(uuid.UUID(r.json()["id"]))
    assert run_queued(api, team) == 3
    api.session.expire_all()

    counts = []
    member_id = team["member"]["X-Client-Id"]
    pk = api.session.scalars(select(Client.id).where(Client.client_id == member_id)).one()
    member = Principal("client", member_id, pk, frozenset({"individual:query"}))
    for job_id in jobs:
        n, results = statements(api.session, lambda job_id=job_id: job_results(api.session, member, job_id,
                                                                               team["keys"]))  # fmt: skip
        counts.append(n)
        assert all(r.status == "released" and len(r.answers) == 2 for r in results)
        assert {r.answers[0]["provenance"]["condition"] for r in results} == {"interview"}
    # The job and its membership, its results, their answers, and the read's audit event: whatever the agents.
    assert len(results) == 2 and counts[0] == counts[1] <= 6
    assert api.session.get_one(Job, jobs[1]).status == "done"
