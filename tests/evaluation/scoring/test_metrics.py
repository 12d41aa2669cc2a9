import math

import numpy as np
import pytest

from evaluation.scoring.metrics import (
    accuracy,
    bootstrap_interval,
    demographic_parity_difference,
    fisher_z_mean,
    mean_absolute_error,
    mean_normalized_accuracy,
    normalized_accuracy,
    one_hot_weighted_correlation,
    ordinal_scale,
)


def test_park_et_al_published_aggregate():
    assert normalized_accuracy(0.6885, 0.8125) == pytest.approx(0.847, abs=5e-4)


def test_accuracy_skips_missing_answers():
    assert accuracy([1, 2, 3, None], [1, 1, 3, 2]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        accuracy([None], [1])


def test_normalized_accuracy_is_per_person_then_averaged():
    wave1 = {"a": [1, 1, 1, 1], "b": [2, 2, 2, 2]}
    wave2 = {"a": [1, 1, 1, 2], "b": [2, 2, 1, 1]}  # a repeats 3/4, b repeats 2/4
    agent = {"a": [1, 1, 2, 2], "b": [2, 1, 1, 1]}  # a gets 2/4, b gets 1/4
    # a: 0.5 / 0.75 = 2/3; b: 0.25 / 0.5 = 1/2 → mean 7/12 (not 0.375 / 0.625 = 0.6).
    assert mean_normalized_accuracy(agent, wave1, wave2) == pytest.approx(7 / 12)
    with pytest.raises(ValueError):
        normalized_accuracy(0.5, 0.0)


def test_ordinal_scaling():
    assert [ordinal_scale(c, [1, 2, 3, 4, 5]) for c in (1, 3, 5)] == [0.0, 0.5, 1.0]


def test_one_hot_correlation_weights_items_by_one_over_k():
    # Perfect agreement correlates 1, whatever the options.
    assert one_hot_weighted_correlation([1, 3], [1, 3], [[1, 2], [1, 2, 3, 4]]) == pytest.approx(1.0)
    # Hand computation for one binary item, agent 1 vs person 2: x = (1, 0), y = (0, 1), weights 1/2 each → r = -1.
    assert one_hot_weighted_correlation([1], [2], [[1, 2]]) == pytest.approx(-1.0)
    # A 2-option item (weights 1/2) right and a 4-option item (weights 1/4) wrong:
    x = np.array([1, 0, 1, 0, 0, 0])
    y = np.array([1, 0, 0, 1, 0, 0])
    w = np.array([0.5, 0.5, 0.25, 0.25, 0.25, 0.25]) / 2.0
    mx, my = (w * x).sum(), (w * y).sum()
    expected = (w * (x - mx) * (y - my)).sum() / math.sqrt((w * (x - mx) ** 2).sum() * (w * (y - my) ** 2).sum())
    assert one_hot_weighted_correlation([1, 1], [1, 2], [[1, 2], [1, 2, 3, 4]]) == pytest.approx(expected)


def test_fisher_z_average_differs_from_the_plain_mean():
    assert fisher_z_mean([0.9, 0.1]) == pytest.approx(math.tanh((math.atanh(0.9) + math.atanh(0.1)) / 2))
    assert fisher_z_mean([0.9, 0.1]) > 0.5  # the plain mean would be 0.5
    assert fisher_z_mean([1.0]) < 1.0 + 1e-9  # clipped, never infinite


def test_mae_and_demographic_parity_difference():
    assert mean_absolute_error([0.2, 0.5], [0.4, 0.5]) == pytest.approx(0.1)
    dpd = demographic_parity_difference({"liberal": [0.8, 0.9], "moderate": [0.7], "conservative": [0.6, 0.7]})
    assert dpd == pytest.approx(0.85 - 0.65)
    with pytest.raises(ValueError):
        demographic_parity_difference({"only": [1.0]})


def test_bootstrap_interval_brackets_the_mean_and_is_reproducible():
    values = np.random.default_rng(3).normal(0.8, 0.1, size=200)
    low, high = bootstrap_interval(values, seed=1)
    assert low < values.mean() < high and high - low < 0.05
    assert (low, high) == bootstrap_interval(values, seed=1)
