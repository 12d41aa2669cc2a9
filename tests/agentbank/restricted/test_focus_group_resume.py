"""A worker killed (SIGKILL) in the middle of a focus group: another worker resumes it from the stored turns,
and no utterance is lost or made twice (each made once by the model, released and audited once)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.orm import Session

from agentbank.access.principals import Principal
from agentbank.access.scope import ProjectScope
from agentbank.db.models import AnswerRecord, AuditEvent, Client, FocusGroup, FocusGroupUtterance
from agentbank.restricted import projects
from agentbank.restricted.groups.requests import FocusGroupRequest
from agentbank.restricted.groups.storage import submit_group
from tests.support.factories import build, process_keyring
from tests.support.workers import kill_while_blocked, start_worker

pytestmark = [pytest.mark.slow, pytest.mark.cli]
BLOCKED_AT = 6  # the turn the first worker is stopped at: seat 3's answer to the first question


def test_a_group_killed_mid_run_resumes_with_no_utterance_lost_or_made_twice(fresh_database):
    engine = create_engine(fresh_database)
    with Session(engine) as session, session.begin():
        keys = process_keyring(fresh_database)
        agents = [build(session, ref=f"file:g{n}.json", turns=6, keys=keys)[1] for n in range(3)]
        client = Client(client_id="cl_team", name="team", secret_hash=b"x" * 48, scopes=["individual:query"])
        session.add(client)
        session.flush()
        member = Principal("client", "cl_team", client.id, frozenset({"projects:apply", "individual:query"}))
        application = projects.Application("Gardens", "purpose " * 5, "harms " * 5, [], None, ["focus_group"])
        project = projects.apply(session, member, application)
        reviewer = Principal("client", "reviewer", None, frozenset({"review"}))
        grant = ProjectScope.of(None, ["focus_group"], 12, 100, datetime.now(UTC) + timedelta(days=1))
        projects.decide(session, reviewer, project.id, grant, "ok")
        request = FocusGroupRequest.model_validate({
            "seats": [str(a.id) for a in agents],
            "guide": {"topics": [{"title": "Plan", "questions": ["First reaction?", "Who would use it?"]}],
                      "max_turns": 6, "probes_per_question": 0},
            "stimulus": {"text": "A community garden beside the plant."},
        })  # fmt: skip
        group_id = submit_group(session, member, project.id, "g1", request)[0].id

    # A turn held open by another transaction: the first worker's write of it waits, inside its release.
    blocker = engine.connect()
    blocker.execute(
        text("INSERT INTO focus_group_utterances (group_id, number, round, kind, answer_ids, reasons, prompt_tokens, "
             "cached_tokens, completion_tokens) VALUES (:g, :n, 1, 'left', '[]', '[]', 0, 0, 0)"),
        {"g": group_id, "n": BLOCKED_AT},
    )  # fmt: skip
    first = start_worker(fresh_database)

    seen: dict[str, object] = {}

    def before_the_kill() -> None:  # what was made and written when the worker blocked, read before it dies
        with engine.connect() as conn:
            made = select(AnswerRecord.id).where(AnswerRecord.question_sha256.is_not(None))
            seen["made"] = set(conn.scalars(made))
            seen["turns"] = conn.scalar(select(func.count()).where(FocusGroupUtterance.group_id == group_id))

    kill_while_blocked(engine, first, blocker, 120, before_kill=before_the_kill)
    made_before, turns_before = seen["made"], seen["turns"]

    second = start_worker(fresh_database, "--burst")
    output, _ = second.communicate(timeout=300)
    assert second.returncode == 0, output

    with Session(engine) as session:
        assert session.get_one(FocusGroup, group_id).status == "done", output
        turns = list(session.scalars(select(FocusGroupUtterance).where(FocusGroupUtterance.group_id == group_id)
                                     .order_by(FocusGroupUtterance.number)))  # fmt: skip
        assert [t.number for t in turns] == list(range(len(turns)))  # none lost, none twice
        spoken = [t for t in turns if t.kind == "agent"]
        assert len(spoken) == 6 and len({t.answer_ids[0] for t in spoken}) == 6
        audited = session.scalars(select(AuditEvent.details["utterance"].as_integer())
                                  .where(AuditEvent.action == "focus_group.answer")).all()  # fmt: skip
        assert sorted(audited) == sorted(t.number for t in spoken)  # released and audited once each
        made = session.scalar(select(func.count()).select_from(AnswerRecord)
                              .where(AnswerRecord.question_sha256.is_not(None)))  # fmt: skip
        assert made == 12  # each utterance's words and stance made once: the killed one's were found again
        # Killed after seat 3's answer to the first question was made (stored) and before its turn was written:
        # the second worker released that same answer, not a new one.
        assert turns_before == BLOCKED_AT and len(made_before) == 3 * 2
        killed = next(t for t in spoken if t.number == BLOCKED_AT)
        assert set(killed.answer_ids) <= made_before
    engine.dispose()
