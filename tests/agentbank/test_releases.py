"""Releases: the policy that keeps changes from being isolated, and readers that see one release whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select

from agentbank.audit import log as audit
from agentbank.db.engine import make_sessionmaker, transaction
from agentbank.db.models import PopulationAnswer, Release, ReleaseCount, ReleaseMember
from agentbank.instruments import load_instrument
from agentbank.open_tier.population import store_population_answer
from agentbank.open_tier.releases import Changes, cut_release, open_table
from tests.app.api.factories import population

GSS = load_instrument("gss", Path("../shared/data"))


def instruments(key: str):
    return load_instrument(key, Path("../shared/data"))


@pytest.mark.parametrize(
    ("joined", "left", "first", "allowed"),
    [
        (9, 0, True, False), (10, 0, True, True),  # the first release needs k agents
        (0, 0, False, False),  # nothing changed
        (3, 0, False, False), (0, 1, False, False), (12, 1, False, False),  # someone could be isolated
        (10, 0, False, True), (0, 10, False, True), (11, 10, False, True),
    ],
)  # fmt: skip
def test_a_release_waits_until_every_change_hides_among_k(joined, left, first, allowed):
    assert (Changes(100, joined, left, first).blocker(10) is None) is allowed


def test_members_whose_answers_changed_count_as_a_change():
    assert "1 agent(s) changed their answers" in Changes(100, 10, 0, False, changed=1).blocker(10)
    assert Changes(100, 0, 0, False, changed=40).blocker(10) is None  # e.g. everyone answered a new item


def test_a_cut_refused_by_the_policy_changes_nothing(db):
    population(db, [({"sex": 1}, 1)] * 12)
    first = cut_release(db, instruments, 10, audit.SYSTEM)
    assert first.release is not None and first.release.agents == 12
    population(db, [({"sex": 2}, 2)] * 4)
    refused = cut_release(db, instruments, 10, audit.SYSTEM)
    assert refused.release is None and "4 agent(s) joined" in refused.reason
    population(db, [({"sex": 2}, 1)] * 6)
    second = cut_release(db, instruments, 10, audit.SYSTEM).release
    assert second is not None and (second.agents, second.joined, second.left) == (22, 10, 0)
    assert open_table(db, GSS, "cappun", []).total == 22
    # One member's answer changes (a re-run of the population job): the change alone would show it.
    member = db.scalars(select(ReleaseMember.agent_id).where(ReleaseMember.release_id == second.id)).first()
    code = db.scalar(select(PopulationAnswer.code).where(PopulationAnswer.agent_id == member))
    store_population_answer(db, member, "gss", "cappun", 3 - code)
    refused = cut_release(db, instruments, 10, audit.SYSTEM)
    assert refused.release is None and "1 agent(s) changed their answers" in refused.reason


def test_a_reader_during_a_cut_sees_one_release_whole(fresh_database):
    engine = create_engine(fresh_database)
    sessions = make_sessionmaker(engine)
    with transaction(sessions) as session:
        population(session, [({"sex": 1}, 1)] * 6 + [({"sex": 2}, 2)] * 6)
        old = cut_release(session, instruments, 10, audit.SYSTEM).release.id
    with sessions() as cutting, cutting.begin():
        population(cutting, [({"sex": 2}, 1)] * 10)
        new = cut_release(cutting, instruments, 10, audit.SYSTEM).release.id
        with sessions() as reader:
            during = open_table(reader, GSS, "cappun", ["sex"])
        assert (during.release, during.total) == (old, 12)
    with sessions() as reader:
        after = open_table(reader, GSS, "cappun", ["sex"])
        assert (after.release, after.total) == (new, 22)
        # The release a reader chose a moment before stays whole until the next cut.
        kept = reader.scalar(select(func.sum(ReleaseCount.count)).where(ReleaseCount.release_id == old))
        assert kept == 12 and reader.scalar(select(func.count()).select_from(Release)) == 2
    engine.dispose()
