"""Small cells are hidden, and no hidden cell can be recovered from what is released anywhere."""

import itertools
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from agentbank.breakdowns import BREAKDOWNS
from agentbank.population import _protected_tables
from agentbank.suppression import Table, bounds, suppress

CODES = (1, 2, 3)


def test_nine_agents_hidden_ten_shown():
    for n, hidden in [(9, True), (10, False)]:
        # Two groups: one with n agents all answering 1, one large group spread over the codes.
        counts = {(("female",), 1): n, (("male",), 1): 30, (("male",), 2): 25, (("male",), 3): 20}
        released = _protected_tables(("sex",), CODES, 10, counts)[("sex",)]
        assert (released[(("female",), 1)] is None) is hidden
        assert (released[(("female",), None)] is None) is hidden


def test_two_by_two_with_margins_hides_all_four():
    t = Table([12, 3, 20, 15])
    cells = [t.add(("c", i), [i]) for i in range(4)]
    for key, members in [("r0", [0, 1]), ("r1", [2, 3]), ("k0", [0, 2]), ("k1", [1, 3]), ("n", [0, 1, 2, 3])]:
        t.add((key,), members)
    suppress(t)
    assert all(c.suppressed for c in cells)
    assert bounds(t, cells[1]) == (0.0, 15.0)  # the primary cell could be anything from 0 to 15


def attacker_range(base_counts, released_tables, dims, codes, target_key):
    """What an attacker who sees every linked table learns about one hidden statistic."""
    categories = [BREAKDOWNS[d].categories for d in dims]
    index = {(g, c): i for i, (g, c) in enumerate(itertools.product(itertools.product(*categories), codes))}
    rows_eq, values = [], []
    target = None
    for subset_dims, values_by_key in released_tables.items():
        positions = [dims.index(d) for d in subset_dims]
        for (group, code), value in values_by_key.items():
            row = np.zeros(len(index))
            for (g, c), i in index.items():
                if all(g[p] == v for p, v in zip(positions, group, strict=True)) and (code is None or c == code):
                    row[i] = 1
            if subset_dims == dims and (group, code) == target_key:
                target = row
            if value is not None:
                rows_eq.append(row)
                values.append(value)
    # Counts are not negative; a hidden statistic may be zero (zeros serve as complements too).
    kwargs = {"A_eq": np.array(rows_eq), "b_eq": np.array(values, dtype=float), "bounds": (0, None), "method": "highs"}
    low = linprog(target, **kwargs).fun
    high = linprog(-target, **kwargs)
    return low, (math.inf if high.status == 3 else -high.fun)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dims=st.sampled_from([("sex",), ("race",), ("sex", "race")]),
    answers=st.lists(
        st.tuples(
            st.sampled_from(["male", "female"]), st.sampled_from(["white", "black", "other"]), st.sampled_from(CODES)
        ),
        min_size=1,
        max_size=80,
    ),
)
def test_no_hidden_cell_is_determined_by_released_cells_and_margins(dims, answers):
    counts: dict = {}
    for sex, race, code in answers:
        group = tuple({"sex": sex, "race": race}[d] for d in dims)
        counts[(group, code)] = counts.get((group, code), 0) + 1
    tables = _protected_tables(dims, CODES, 10, counts)
    for key, value in tables[dims].items():
        if value is None:
            low, high = attacker_range(counts, tables, dims, CODES, key)
            assert not (math.isfinite(high) and math.floor(high + 1e-6) <= math.ceil(low - 1e-6)), (key, low, high)
        elif 0 < value < 10:
            raise AssertionError(f"released a small cell {key}={value}")
