"""Consistent tables from noisy ones: non-negative integers whose totals agree across every table."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from agentbank.publication.consistency import Measured, consistent

SHAPES = {"a": 2, "b": 3, "c": 4}


def _truth(rng: np.random.Generator, members: int, codes: int, zero_group: int | None = None) -> dict:
    """Exact tables of made-up members over breakdowns a, b, c, laid out as protection does."""
    profiles = np.stack([rng.integers(0, n, members) for n in SHAPES.values()], axis=1)
    if zero_group is not None:  # nobody in category zero_group of a
        profiles[profiles[:, 0] == zero_group, 0] = 1 - zero_group
    answers = rng.integers(0, codes, members)
    dims = list(SHAPES)
    out = {}
    for key in [(), *((d,) for d in dims), *itertools.combinations(dims, 2)]:
        group = np.zeros(members, dtype=np.int64)
        for d in key:
            group = group * SHAPES[d] + profiles[:, dims.index(d)]
        out[key] = np.bincount(group * codes + answers, minlength=int(np.prod([SHAPES[d] for d in key])) * codes)
    return out


def _measured(truth: dict, rng: np.random.Generator | None, sigma: float, keep=None) -> list[Measured]:
    tables = []
    for dims, exact in truth.items():
        if keep is not None and dims not in keep:
            continue
        noise = np.zeros(exact.size) if rng is None else rng.normal(0.0, sigma, exact.size)
        counts = exact + np.rint(noise).astype(np.int64)
        tables.append(Measured(dims, counts, sigma, tuple(SHAPES[d] for d in dims)))
    return tables


def _assert_consistent(out: dict, tables: list[Measured], codes: int) -> None:
    totals = out[()]
    for t in tables:
        table = out[t.dims]
        assert table.dtype == np.int64 and table.shape == t.counts.shape
        assert (table >= 0).all(), t.dims
        assert (table.reshape(-1, codes).sum(axis=0) == totals).all(), t.dims


def test_small_noisy_tables_come_out_non_negative_and_adding_up():
    rng = np.random.default_rng(7)
    truth = _truth(rng, 40, 3)
    tables = _measured(truth, rng, 5.0)
    assert min(t.counts.min() for t in tables) < 0  # the noise did make counts negative
    out = consistent(tables, 3)
    assert set(out) == set(truth)
    _assert_consistent(out, tables, 3)


def test_two_way_margins_equal_the_one_way_tables():
    rng = np.random.default_rng(11)
    for members in (30, 500, 5000):
        truth = _truth(rng, members, 4)
        tables = _measured(truth, rng, 5.0)
        out = consistent(tables, 4)
        _assert_consistent(out, tables, 4)
        for d1, d2 in itertools.combinations(SHAPES, 2):
            cube = out[(d1, d2)].reshape(SHAPES[d1], SHAPES[d2], 4)
            assert (cube.sum(axis=1) == out[(d1,)].reshape(-1, 4)).all()  # exactly
            assert np.abs(cube.sum(axis=0) - out[(d2,)].reshape(-1, 4)).max() <= 1  # as rounding allows


def test_a_large_two_way_table_meets_its_second_margin_within_a_count():
    # Rounding each (g1, code) row on its own would leave column sums up to n1 - 1 off (2 here, typically);
    # rounding rows in turn, each favouring the columns rounded down so far, keeps them within one.
    rng = np.random.default_rng(19)
    n1, n2, codes = 9, 7, 6
    for _ in range(5):
        p, q, a = rng.integers(0, n1, 3000), rng.integers(0, n2, 3000), rng.integers(0, codes, 3000)
        exact = {
            (): np.bincount(a, minlength=codes),
            ("p",): np.bincount(p * codes + a, minlength=n1 * codes),
            ("q",): np.bincount(q * codes + a, minlength=n2 * codes),
            ("p", "q"): np.bincount((p * n2 + q) * codes + a, minlength=n1 * n2 * codes),
        }
        shapes = {(): (), ("p",): (n1,), ("q",): (n2,), ("p", "q"): (n1, n2)}
        tables = [Measured(d, e + np.rint(rng.normal(0, 5, e.size)).astype(np.int64), 5.0, shapes[d])
                  for d, e in exact.items()]  # fmt: skip
        out = consistent(tables, codes)
        cube = out[("p", "q")].reshape(n1, n2, codes)
        assert (cube.sum(axis=1) == out[("p",)].reshape(n1, codes)).all()
        assert np.abs(cube.sum(axis=0) - out[("q",)].reshape(n2, codes)).max() <= 1


def test_no_tables_give_no_tables():
    assert consistent([], 3) == {}


def test_totals_are_the_inverse_variance_mean_of_all_tables():
    codes = 2
    overall = Measured((), np.array([100, 50]), 1.0, ())
    one_way = Measured(("b",), np.array([40, 30, 40, 30, 40, 30]), 1.0, (3,))  # sums 120, 90; variance 3
    out = consistent([overall, one_way], codes)
    # (100 * 1 + 120 / 3) / (1 + 1/3) = 105 and (50 + 90 / 3) / (4 / 3) = 60
    assert out[()].tolist() == [105, 60]
    exact = Measured((), np.array([100, 50]), 0.0, ())  # measured without noise, it decides alone
    assert consistent([exact, one_way], codes)[()].tolist() == [100, 50]


def test_totals_are_clipped_and_rounded_to_the_rounded_grand_total():
    tables = [Measured((), np.array([10, -4, 3]), 1.0, ()), Measured((), np.array([11, -2, 4]), 1.0, ())]
    out = consistent(tables, 3)
    assert out[()].tolist() == [11, 0, 3]  # 10.5, 0 (clipped), 3.5: grand total 14, the tie to the first code
    assert (out[()] >= 0).all()


def test_large_tables_with_small_noise_stay_close_to_the_truth():
    rng = np.random.default_rng(2024)
    raw = {1: [], 2: []}
    fitted = {1: [], 2: []}
    for _ in range(10):
        truth = _truth(rng, 50_000, 4)
        tables = _measured(truth, rng, 4.0)
        out = consistent(tables, 4)
        for t in tables:
            if t.dims:
                raw[len(t.dims)].append(np.abs(t.counts - truth[t.dims]).mean())
                fitted[len(t.dims)].append(np.abs(out[t.dims] - truth[t.dims]).mean())
                assert np.abs(out[t.dims] - truth[t.dims]).max() <= 20  # within a few sigma of the truth
    for kind in (1, 2):
        assert np.mean(fitted[kind]) <= np.mean(raw[kind]), kind


def test_an_empty_group_stays_near_zero():
    rng = np.random.default_rng(5)
    truth = _truth(rng, 20_000, 3, zero_group=0)
    assert truth[("a",)][:3].sum() == 0
    tables = _measured(truth, rng, 2.0)
    out = consistent(tables, 3)
    _assert_consistent(out, tables, 3)
    assert out[("a",)][:3].max() <= 6  # three sigma: never more than noise could have put there
    assert out[("a",)][:3].mean() <= 2.0
    assert out[("a", "b")].reshape(2, 3, 3)[0].max() <= 6
    assert out[("a", "c")].reshape(2, 4, 3)[0].sum() == out[("a",)][:3].sum()


def test_exact_tables_are_returned_unchanged():
    rng = np.random.default_rng(3)
    for members, zero_group in ((25, None), (400, 1)):
        truth = _truth(rng, members, 5, zero_group)
        out = consistent(_measured(truth, None, 0.0), 5)
        for dims, exact in truth.items():
            assert out[dims].tolist() == exact.tolist(), dims


def test_a_two_way_table_without_its_one_way_tables_is_consistent_with_the_totals():
    rng = np.random.default_rng(13)
    truth = _truth(rng, 60, 3)
    tables = _measured(truth, rng, 5.0, keep={(), ("a", "b"), ("a", "c")})
    out = consistent(tables, 3)
    assert set(out) == {(), ("a", "b"), ("a", "c")}
    _assert_consistent(out, tables, 3)
    # Both tables holding a agree on its margin, estimated from both.
    ab, ac = out[("a", "b")].reshape(2, 3, 3), out[("a", "c")].reshape(2, 4, 3)
    assert (ab.sum(axis=1) == ac.sum(axis=1)).all()
    alone = consistent([t for t in tables if t.dims == ("a", "b")], 3)  # no overall table either
    assert (alone[("a", "b")].reshape(-1, 3).sum(axis=0) >= 0).all()
    assert (alone[("a", "b")] >= 0).all()


def test_a_missing_margin_is_the_inverse_variance_mean_of_the_two_way_tables_holding_it():
    overall = Measured((), np.array([30]), 0.0, ())  # exact: the total is 30
    ab = Measured(("a", "b"), np.array([4, 4, 4, 6, 6, 6]), 1.0, (2, 3))  # a-margin 12, 18, variance 3
    ax = Measured(("a", "x"), np.array([20, 10]), 1.0, (2, 1))  # a-margin 20, 10, variance 1
    out = consistent([overall, ab, ax], 1)
    # (12 / 3 + 20) / (4 / 3) = 18 and (18 / 3 + 10) / (4 / 3) = 12 (an unweighted mean would give 16, 14)
    assert out[("a", "x")].tolist() == [18, 12]
    assert out[("a", "b")].reshape(2, 3).sum(axis=1).tolist() == [18, 12]


def test_the_result_is_deterministic():
    rng = np.random.default_rng(17)
    truth = _truth(rng, 80, 4)
    tables = _measured(truth, rng, 5.0)
    first, second = consistent(tables, 4), consistent(tables, 4)
    assert all((first[d] == second[d]).all() for d in first)


def test_a_table_that_does_not_fit_its_shape_is_refused():
    with pytest.raises(ValueError, match="does not hold"):
        consistent([Measured(("a",), np.zeros(5, dtype=np.int64), 1.0, (2,))], 3)
