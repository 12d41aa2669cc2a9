"""Releases: when one may be cut, what it keeps (protected tables, no row per person), what it spends,
and readers that see one release whole."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm
from sqlalchemy import create_engine, func, select, text, update

from agentbank.audit import log as audit
from agentbank.core.settings import Settings
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.db.models import Agent, Release, ReleaseTable, TableRequest
from agentbank.instruments import load_instrument
from agentbank.publication.privacy import (
    ASKED_PER_ITEM,
    SHARES,
    Budget,
    OpenDPNoise,
    Scales,
    guess_bound,
    ledger,
    spent_rho,
)
from agentbank.publication.releases import Pending, Policy, cut_release, open_table
from agentbank.publication.workload import STANDING, ask
from tests.app.api.factories import NoNoise, answer, population
from tests.support.factories import SECRET, keyring

GSS = load_instrument("gss", Path("../shared/data"))
POLICY = Policy(10, Budget(mu=1.0, lifetime_mu=2.0), min_interval_s=3600)


def instruments(key: str):
    return load_instrument(key, Path("../shared/data"))


def cut(session, policy: Policy = POLICY, *, force: bool = False, noise=None):
    return cut_release(session, keyring(), instruments, policy, audit.SYSTEM, force=force, noise=noise or NoNoise())


@pytest.mark.parametrize(
    ("pending", "force", "reason"),
    [
        (Pending(9, 0, True, True, None), False, "9 agents can be released; a release needs 10"),
        (Pending(9, 3, False, True, None), True, "3 more have spent their privacy budget"),  # force never skips k
        (Pending(10, 0, True, True, None), False, None),  # the first release
        (Pending(50, 0, False, False, 7200), False, "nothing changed since the last release"),
        (Pending(50, 0, False, True, 600), False, "the next may be cut in 0.8 h"),
        (Pending(50, 0, False, True, 600), True, None),  # an operator's forced cut skips the wait only
        (Pending(50, 0, False, True, 7200), False, None),
    ],
)  # fmt: skip
def test_when_a_release_may_be_cut(pending, force, reason):
    blocker = pending.blocker(POLICY, force=force)
    assert blocker is None if reason is None else reason in blocker


def test_the_scales_spend_exactly_mu_per_answer_and_opendp_says_so():
    for mu in (0.5, 1.0, 2.0):
        budget = Budget(mu=mu, weight_cap=2.0)
        s = Scales.of(budget, len(STANDING))
        n = len(STANDING)
        # By hand: n tables of squared change d2 cost n·d2/sigma² of mu² (the standing workload, then the reserve).
        spent = (2 / s.overall**2 + n * 2 / s.one_way**2 + ASKED_PER_ITEM * 2 / s.asked**2
                 + (n + 1) * 2 * 4 / s.weighted**2 + 3 / s.validity**2)  # fmt: skip
        assert spent == pytest.approx(mu**2)
        assert sum(SHARES.values()) == pytest.approx(1.0)
        cost = ledger(budget, s, STANDING, 173)
        # OpenDP's own accounting (each measurement's map) agrees with the arithmetic: rho = mu²/2 per answer.
        assert cost.rho_per_answer == pytest.approx(mu**2 / 2, rel=1e-5)
        assert cost.rho_per_person > 50 * cost.rho_per_answer  # everything at once is far weaker: said plainly


def test_the_reserve_is_a_setting_and_the_release_still_spends_exactly_mu():
    for reserve in (0.1, 0.3, 0.5):
        budget = Budget(mu=1.0, weight_cap=2.0)
        s = Scales.of(budget, len(STANDING), reserve)
        assert s.asked == pytest.approx(math.sqrt(ASKED_PER_ITEM * 2 / reserve))  # the reserve's noise, as set
        assert ledger(budget, s, STANDING, 173).rho_per_answer == pytest.approx(0.5, rel=1e-5)
    settings = Settings(secret_key=SECRET, release_reserve_share=0.5)
    assert Policy.of(settings).reserve == 0.5


def test_opendp_maps_each_kind_of_table_as_its_formula():
    s = Scales.of(Budget(mu=1.0), len(STANDING))
    # One one-way table: an answer moves two counts by one (L2 sqrt 2): rho = 2 / (2 sigma²).
    assert spent_rho(s, {"one_way": 1}, {"one_way": 2.0}, 0.0) == pytest.approx(1 / s.one_way**2, rel=1e-5)
    assert spent_rho(s, {"weighted": 3}, {}, 8.0) == pytest.approx(3 * 8 / (2 * s.weighted**2), rel=1e-5)


def test_a_lifetime_budget_sized_to_the_horizon_keeps_a_member_in_five_years_of_monthly_releases():
    budget = Budget.for_horizon(1.0, horizon_days=1826, interval_days=30)
    assert budget.releases_per_member() == 61  # floor(1826 / 30) + 1 releases fit in five years
    assert Policy.of(Settings(secret_key=SECRET)).budget == budget  # the default settings' own rule


def test_the_best_guess_bound_by_hand():
    # Two equally likely answers, mu apart: the best test is right Phi(mu/2) of the time.
    for mu in (0.5, 1.0, 2.0):
        assert guess_bound(mu, [1, 1]) == pytest.approx(norm.cdf(mu / 2), abs=0.004)
    assert guess_bound(0.01, [3, 1]) == pytest.approx(0.75, abs=0.004)  # no information: the prior's mode
    assert guess_bound(1.0, [1, 1, 1]) < guess_bound(2.0, [1, 1, 1]) < 1


def test_opendp_noise_has_the_stated_spread_and_no_bias():
    counts = np.full(4000, 50)
    noisy = OpenDPNoise().counts(counts, 7.0) - counts
    assert abs(noisy.mean()) < 0.5 and noisy.std() == pytest.approx(7.0, rel=0.06)
    totals = OpenDPNoise().totals(np.full(4000, 12.5), 3.0) - 12.5
    assert abs(totals.mean()) < 0.2 and totals.std() == pytest.approx(3.0, rel=0.06)


def test_a_release_keeps_its_standing_tables_and_no_row_per_person(db):
    agents = population(db, [({"sex": 1 + i % 2, "race": 1 + i % 3}, 1 + i % 2) for i in range(12)])
    release = cut(db).release
    assert release is not None
    stored = db.scalars(select(ReleaseTable.breakdowns).where(ReleaseTable.release_id == release.id,
                                                              ReleaseTable.item == "cappun")).all()  # fmt: skip
    assert sorted(stored) == sorted(["", *STANDING])  # the standing workload: no table nobody asked for
    every_body = str(db.scalars(select(ReleaseTable.released).where(ReleaseTable.release_id == release.id)).all())
    assert not any(str(a.id) in every_body or str(a.participant_id) in every_body for a in agents)
    assert {"release_members", "release_counts"}.isdisjoint(
        db.scalars(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).all()
    )
    assert release.privacy["mu_per_answer"] == 1.0 and "OpenDP" in release.privacy["mechanism"]


def test_a_cut_refused_by_the_policy_changes_nothing(db):
    population(db, [({"sex": 1}, 1)] * 12)
    first = cut(db).release
    assert first is not None and open_table(db, GSS, "cappun", []).total == 12
    refused = cut(db)
    assert refused.release is None and refused.reason == "nothing changed since the last release"
    population(db, [({"sex": 2}, 2)] * 4)
    waiting = cut(db)
    assert waiting.release is None and "the next may be cut in" in waiting.reason
    assert db.scalar(select(func.count()).select_from(Release)) == 1
    forced = cut(db, force=True).release  # an operator's: no k-rule on who joined, noise protects them
    assert forced is not None and open_table(db, GSS, "cappun", []).total == 16


def test_a_changed_answer_is_a_change(db):
    agents = population(db, [({"sex": 1}, 1)] * 12)
    cut(db, Policy(10, Budget(), min_interval_s=0))
    assert cut(db, Policy(10, Budget(), min_interval_s=0)).release is None
    answer(db, agents[0].id, "cappun", 2)  # sealed again: its ciphertext, and so the digest, changes
    assert cut(db, Policy(10, Budget(), min_interval_s=0)).release is not None


def test_members_whose_lifetime_budget_is_spent_are_left_out(db):
    agents = population(db, [({"sex": 1}, 1)] * 12)
    policy = Policy(5, Budget(mu=1.0, lifetime_mu=math.sqrt(2)), min_interval_s=0)  # two releases each
    now = datetime.now(UTC)
    db.execute(update(Agent).where(Agent.id.in_([a.id for a in agents])).values(created_at=now - timedelta(days=2)))
    for hours_ago in (24, 12):
        release = cut(db, policy, force=True).release
        assert release is not None
        release.cut_at = now - timedelta(hours=hours_ago)  # what a day of releases looks like in one test
        answer(db, agents[-1].id, "cappun", 2)
        db.flush()
    third = cut(db, policy, force=True)
    assert third.release is None and "12 more have spent their privacy budget" in third.reason
    population(db, [({"sex": 2}, 2)] * 6)  # newcomers, built after both releases, carry the open tier on
    fourth = cut(db, policy, force=True).release
    assert fourth is not None and fourth.privacy["left_out_for_budget"] == 12
    assert open_table(db, GSS, "cappun", []).total == 6


def test_a_reader_during_a_cut_sees_one_release_whole(fresh_database):
    engine = create_engine(fresh_database)
    sessions = make_sessionmaker(engine)
    policy = Policy(10, Budget(), min_interval_s=0)
    with transaction(sessions) as session:
        population(session, [({"sex": 1}, 1)] * 6 + [({"sex": 2}, 2)] * 6)
        old = cut(session, policy).release.id
    with sessions() as cutting, cutting.begin():
        population(cutting, [({"sex": 2}, 1)] * 10)
        new = cut(cutting, policy).release.id
        with sessions() as reader:
            during = open_table(reader, GSS, "cappun", ["sex"])
        assert (during.release, during.total) == (old, 12)
    with sessions() as reader:
        after = open_table(reader, GSS, "cappun", ["sex"])
        assert (after.release, after.total) == (new, 22)
        # A read that chose the old release before the new one was committed builds its body from the old one,
        # as its ETag says (the body is kept under that ETag).
        chosen = open_table(reader, GSS, "cappun", ["sex"], old)
        assert (chosen.release, chosen.total) == (old, 12)
        # The release a reader chose a moment before stays whole until the next cut.
        kept = reader.scalar(select(func.count()).select_from(ReleaseTable).where(ReleaseTable.release_id == old))
        assert kept == 1 + len(STANDING)
    engine.dispose()


def test_the_lifetime_rule_keeps_a_member_in_a_simulated_year_of_monthly_cuts(db):
    """At the default cadence (a release a month at most) and a lifetime budget sized to five years, a member
    who stays is in every release; a cut sooner than the cadence is refused."""
    policy = Policy.of(Settings(secret_key=SECRET, suppression_k=10))
    population(db, [({"sex": 1 + i % 2}, 1 + i % 2) for i in range(12)])
    counts = []
    for month in range(13):
        if month:
            population(db, [({"sex": 1}, 1)])  # something changed: a newcomer
            too_soon = cut(db, policy)
            assert too_soon.release is None and "the next may be cut in" in too_soon.reason
            # A month passes, for the releases and the agents alike (each release counts against who joined before).
            db.execute(update(Release).values(cut_at=Release.cut_at - timedelta(days=31)))
            db.execute(update(Agent).values(created_at=Agent.created_at - timedelta(days=31)))
        outcome = cut(db, policy)
        assert outcome.release is not None and outcome.pending.left_out == 0, month
        counts.append(outcome.pending.members)
    assert counts == list(range(12, 25))  # the first twelve members in every release, each newcomer after
    assert policy.budget.releases_per_member() >= 61  # and so on for five years of monthly releases


def test_only_an_asked_table_the_next_cut_would_measure_makes_a_cut_due(db):
    policy = Policy(10, Budget(mu=1.0, lifetime_mu=5.0), min_interval_s=0)
    population(db, [({"sex": 1 + i % 2}, 1 + i % 2) for i in range(12)])
    assert cut(db, policy).release is not None
    db.add(TableRequest(instrument="gss", item="cappun", breakdowns="sex,removed", asks=1))  # a breakdown gone
    db.flush()
    assert cut(db, policy).reason == "nothing changed since the last release"
    ask(db, "gss", "cappun", ("sex", "race"))
    due = cut(db, policy)
    assert due.release is not None and due.pending.asked == 1  # measured now, so nothing is due after it
    assert cut(db, policy).reason == "nothing changed since the last release"
