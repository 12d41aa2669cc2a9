"""Effect sizes and tests of the experiments' analyses, against figures computed by hand."""

from __future__ import annotations

import math
import uuid

import numpy as np
import pytest
from scipy import stats

from agentbank.restricted.experiments import EXPERIMENTS
from agentbank.restricted.experiments.analysis import differ, interaction, means, paired, proportions
from agentbank.restricted.experiments.assignment import assign
from agentbank.restricted.experiments.model import Design


def test_difference_in_means_student_t_and_pooled_d():
    effect = means([4, 5, 6], [1, 2, 3])
    # Means 5 and 2, both variances 1: pooled SD 1, d = 3; t = 3 / sqrt(1/3 + 1/3) on 4 df.
    assert effect.estimate == 3 and effect.d == pytest.approx(3.0)
    assert effect.statistic == pytest.approx(3 / math.sqrt(2 / 3)) and effect.df == 4
    assert effect.p == pytest.approx(2 * stats.t.sf(3 / math.sqrt(2 / 3), 4))
    se = math.sqrt(6 / 9 + 9 / 12)  # Hedges & Olkin: (n1+n2)/(n1 n2) + d²/(2(n1+n2))
    assert (effect.d_low, effect.d_high) == pytest.approx((3 - 1.959964 * se, 3 + 1.959964 * se), abs=1e-5)


def test_difference_in_proportions_chi_square_and_d_from_the_odds_ratio():
    effect = proportions([True] * 8 + [False] * 2, [True] * 2 + [False] * 8)
    assert effect.estimate == pytest.approx(0.6)
    # 2×2 table [[8, 2], [2, 8]]: χ² = N(ad − bc)² / (row and column totals) = 20 · 60² / 10⁴ = 7.2.
    assert effect.statistic == pytest.approx(7.2) and effect.df == 1
    assert effect.p == pytest.approx(stats.chi2.sf(7.2, 1))
    # Odds ratio 16; d = ln 16 · √3/π; its SE √(1/8 + 1/2 + 1/2 + 1/8) on the log scale.
    assert effect.d == pytest.approx(math.log(16) * math.sqrt(3) / math.pi)
    half = 1.959964 * math.sqrt(1.25) * math.sqrt(3) / math.pi
    assert effect.d_high - effect.d_low == pytest.approx(2 * half, abs=1e-5)


def test_paired_t_and_d_z():
    effect = paired([3, 5, 4, 6], [1, 2, 2, 3])
    # Differences 2, 3, 2, 3: mean 2.5, SD √(1/3); d_z = 2.5 / √(1/3); t = 2.5 / (√(1/3) / 2) on 3 df.
    assert effect.d == pytest.approx(2.5 / math.sqrt(1 / 3))
    assert effect.statistic == pytest.approx(2.5 / (math.sqrt(1 / 3) / 2)) and effect.df == 3


def test_two_by_two_interaction_matches_the_anova_term():
    cells = {("hi", "hi"): [5, 7], ("lo", "hi"): [1, 3], ("hi", "lo"): [3, 5], ("lo", "lo"): [2, 4]}
    effect = interaction(cells, ("hi", "lo"), ("hi", "lo"))
    # Cell means 6, 2, 4, 3: (6 − 2) − (4 − 3) = 3; within-cell variance 2 in each, on 4 df.
    assert effect.estimate == 3 and effect.df == 4
    assert effect.d == pytest.approx(3 / math.sqrt(2)) and effect.statistic == pytest.approx(1.5)
    # The same F from a regression with and without the interaction term.
    y, a, b = [], [], []
    for (x, z), values in cells.items():
        for v in values:
            y.append(v), a.append(x == "hi"), b.append(z == "hi")
    a_, b_ = np.array(a, float), np.array(b, float)
    full = np.column_stack([np.ones(8), a_, b_, a_ * b_])
    reduced = full[:, :3]
    rss = [float(np.sum((y - m @ np.linalg.lstsq(m, y, rcond=None)[0]) ** 2)) for m in (full, reduced)]
    f = (rss[1] - rss[0]) / (rss[0] / 4)
    assert effect.statistic**2 == pytest.approx(f)
    assert effect.p == pytest.approx(stats.f.sf(f, 1, 4))


def test_no_variation_gives_no_d_rather_than_a_division_by_zero():
    assert means([4, 4, 4], [4, 4]).d is None
    assert proportions([True, True], [True, True]).d is None


def test_blinded_and_unblinded_estimates_are_compared_on_their_intervals():
    small, large = means([4, 5, 6, 5], [3, 4, 5, 4]), means([9, 10, 11, 10], [1, 2, 3, 2])
    assert differ(small, large) is True
    assert differ(small, means([4, 5, 6, 5.5], [3, 4, 5, 4])) is False


AGENTS = [uuid.UUID(int=n) for n in range(1, 24)]


@pytest.mark.parametrize("key", sorted(EXPERIMENTS))
def test_assignment_is_balanced_and_reproducible_from_the_seed(key):
    experiment = EXPERIMENTS[key]
    arms = assign(experiment, AGENTS, seed=7)
    assert arms == assign(experiment, list(reversed(AGENTS)), seed=7)  # the order agents are named in is moot
    counts = [sum(a == (arm.key,) for a in arms.values()) for arm in experiment.arms]
    assert max(counts) - min(counts) <= 1 and sum(counts) == len(AGENTS)
    assert arms != assign(experiment, AGENTS, seed=8)


def test_within_subjects_every_agent_takes_every_arm_in_a_balanced_order():
    experiment = EXPERIMENTS["cooney"]
    within = type(experiment)(**{**experiment.__dict__, "design": Design.WITHIN})
    orders = assign(within, AGENTS[:20], seed=1)
    assert all(sorted(o) == sorted(a.key for a in experiment.arms) for o in orders.values())
    firsts = [o[0] for o in orders.values()]
    assert abs(firsts.count("fair_less") - firsts.count("unfair_more")) <= 1


def test_the_t_tests_agree_with_scipys():
    draw = np.random.default_rng(3)
    x, y = draw.normal(1, 2, 17), draw.normal(0, 1, 11)
    between, within = means(list(x), list(y)), paired(list(x[:11]), list(y))
    assert (between.statistic, between.p) == pytest.approx(tuple(stats.ttest_ind(x, y)))
    assert (within.statistic, within.p) == pytest.approx(tuple(stats.ttest_rel(x[:11], y)))
