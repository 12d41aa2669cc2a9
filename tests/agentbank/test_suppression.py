"""Small cells are hidden, and no hidden cell can be recovered from what is released anywhere."""

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from agentbank.instruments.model import Instrument, Item, Option
from agentbank.open_tier.breakdowns import BREAKDOWNS
from agentbank.open_tier.distributions import DIMENSIONS, ReleaseTables, as_distribution
from agentbank.open_tier.suppression import Table, bounds, suppress
from agentbank.open_tier.weighting.estimates import weigh

CODES = (1, 2, 3)
DIMS = st.sampled_from([("sex",), ("race",), ("sex", "race")])
# Small banks: each agent's sex, race and answer.
SEXES, RACES = st.sampled_from(["male", "female"]), st.sampled_from(["white", "black", "other"])
AGENT = st.tuples(SEXES, RACES, st.sampled_from(CODES))
BANKS = st.lists(AGENT, min_size=1, max_size=60)


def counts_of(dims, answers):
    """A bank's counts by (group over ``dims``, code), from each agent's sex, race and answer."""
    counts: dict = {}
    for sex, race, code in answers:
        group = tuple({"sex": sex, "race": race}[d] for d in dims)
        counts[(group, code)] = counts.get((group, code), 0) + 1
    return counts


def protected_tables(dims, codes, k, counts):
    """The tables of one release a request over ``dims`` shows: every table over a subset, smallest first."""
    profiles = {}
    for (group, code), n in counts.items():
        named = dict(zip(dims, group, strict=True))
        profile = tuple(named.get(d, "unknown") for d in DIMENSIONS)
        profiles[(profile, code)] = profiles.get((profile, code), 0) + n
    release = ReleaseTables(tuple(codes), k, profiles)
    for size in range(len(dims) + 1):
        for subset in itertools.combinations(dims, size):
            release.protect(subset)
    return release.tables


def test_nine_agents_hidden_ten_shown():
    for n, hidden in [(9, True), (10, False)]:
        # n women answered 1 (and 15 answered 2); the men are spread over the codes.
        counts = {(("female",), 1): n, (("female",), 2): 15, (("male",), 1): 30, (("male",), 2): 25, (("male",), 3): 20}
        released = protected_tables(("sex",), CODES, 10, counts)[("sex",)]
        assert (released[(("female",), 1)] is None) is hidden


def test_two_by_two_with_margins_hides_all_four():
    t = Table([12, 3, 20, 15])
    cells = [t.add(("c", i), [i]) for i in range(4)]
    for key, members in [("r0", [0, 1]), ("r1", [2, 3]), ("k0", [0, 2]), ("k1", [1, 3]), ("n", [0, 1, 2, 3])]:
        t.add((key,), members)
    suppress(t)
    assert all(c.suppressed for c in cells)
    assert bounds(t, cells[1]) == (0.0, 15.0)  # the primary cell could be anything from 0 to 15


def base_index(dims, codes):
    categories = [BREAKDOWNS[d].categories for d in dims]
    return {(g, c): i for i, (g, c) in enumerate(itertools.product(itertools.product(*categories), codes))}


def member_row(index, dims, subset_dims, group, codes_in):
    """The base cells of ``group`` (a group of the table over ``subset_dims``) with a code in ``codes_in``."""
    positions = [dims.index(d) for d in subset_dims]
    row = np.zeros(len(index))
    for (g, c), i in index.items():
        if all(g[p] == v for p, v in zip(positions, group, strict=True)) and (codes_in is None or c in codes_in):
            row[i] = 1
    return row


def attacker_bounds(released_tables, dims, codes, objective):
    """The least and greatest value of ``objective`` (a sum of base cells) an attacker who sees every
    linked table can infer. Counts are not negative; a hidden statistic may be zero."""
    index = base_index(dims, codes)
    rows_eq, values = [], []
    for subset_dims, values_by_key in released_tables.items():
        for (group, code), value in values_by_key.items():
            if value is not None:
                rows_eq.append(member_row(index, dims, subset_dims, group, None if code is None else {code}))
                values.append(value)
    kwargs = {"A_eq": np.array(rows_eq), "b_eq": np.array(values, dtype=float), "bounds": (0, None), "method": "highs"}
    low = linprog(objective, **kwargs).fun
    high = linprog(-objective, **kwargs)
    return low, (math.inf if high.status == 3 else -high.fun)


def attacker_range(base_counts, released_tables, dims, codes, target_key):
    """What an attacker who sees every linked table learns about one hidden statistic."""
    group, code = target_key
    objective = member_row(base_index(dims, codes), dims, dims, group, None if code is None else {code})
    return attacker_bounds(released_tables, dims, codes, objective)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dims=DIMS, answers=BANKS)
def test_no_hidden_cell_is_determined_by_released_cells_and_margins(dims, answers):
    counts = counts_of(dims, answers)
    tables = protected_tables(dims, CODES, 10, counts)
    for key, value in tables[dims].items():
        if value is None:
            low, high = attacker_range(counts, tables, dims, CODES, key)
            assert not (math.isfinite(high) and math.floor(high + 1e-6) <= math.ceil(low - 1e-6)), (key, low, high)
        elif 0 < value < 10:
            raise AssertionError(f"released a small cell {key}={value}")


def exposed_groups(dims, counts, tables, codes=CODES):
    """Groups of any released table whose members all gave one answer that the tables let one infer."""
    index = base_index(dims, codes)
    exposed = []
    for subset_dims in tables:
        positions = [dims.index(d) for d in subset_dims]
        for group in itertools.product(*(BREAKDOWNS[d].categories for d in subset_dims)):
            given = Counter()
            for (g, c), n in counts.items():
                if all(g[p] == v for p, v in zip(positions, group, strict=True)):
                    given[c] += n
            if len([c for c, n in given.items() if n > 0]) != 1:
                continue  # empty, or its members' answers differ: nothing true to infer
            (answer,) = [c for c, n in given.items() if n > 0]
            others = member_row(index, dims, subset_dims, group, set(codes) - {answer})
            _, high = attacker_bounds(tables, dims, codes, others)
            if high < 1 - 1e-6:
                exposed.append((subset_dims, group, answer))
    return exposed


def test_a_released_zero_beside_the_only_hidden_cell_no_longer_tells_the_groups_answer():
    # The attack's shape: race=black with n hidden, code 2 hidden and code 1 released as 0, so all of
    # its three members answered 2 (what count-only suppression released for these counts).
    counts = {(("white",), 1): 2, (("white",), 2): 4, (("black",), 2): 3, (("other",), 1): 1, (("other",), 2): 2}
    tables = protected_tables(("race",), (1, 2), 10, counts)
    assert tables[("race",)][(("black",), 1)] is None
    assert exposed_groups(("race",), counts, tables, codes=(1, 2)) == []


def test_a_large_group_that_answered_alike_is_protected_too():
    counts = {(("male",), 1): 25, (("female",), 1): 12, (("female",), 2): 14}
    tables = protected_tables(("sex",), CODES, 10, counts)
    assert exposed_groups(("sex",), counts, tables) == []
    assert tables[()][((), None)] == 51  # the overall count is still shown


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dims=DIMS, answers=BANKS)
def test_no_groups_answer_can_be_inferred_from_the_released_tables(dims, answers):
    counts = counts_of(dims, answers)
    tables = protected_tables(dims, CODES, 10, counts)
    assert exposed_groups(dims, counts, tables) == []


ITEM = Item("q", "categorical", "A question?", options=tuple(Option(c, f"answer {c}") for c in CODES))
INSTRUMENT = Instrument("test", "Test", "", "test", (ITEM,))
WEIGHT = st.floats(min_value=0.2, max_value=5.0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dims=DIMS, answers=BANKS, weights=st.tuples(*[WEIGHT] * 6))
def test_weighted_figures_show_exactly_where_their_counts_do(dims, answers, weights):
    """Cells are suppressed on their unweighted counts, whatever the weights: a hidden count keeps its
    weighted share, interval and its group's design effect hidden too."""
    weight_of_profile = dict(
        zip(itertools.product(("male", "female"), ("white", "black", "other")), weights, strict=True)
    )
    counts = counts_of(dims, answers)
    tables = protected_tables(dims, CODES, 10, counts)
    by_profile = counts_of(("sex", "race"), answers)
    weighted = weigh(by_profile, lambda p: tuple(dict(zip(("sex", "race"), p, strict=True))[d] for d in dims),
                     lambda p: weight_of_profile[p])  # fmt: skip
    table = as_distribution(1, INSTRUMENT, ITEM, dims, 10, tables[dims], len(answers), weighted=weighted)
    for cell in table.cells:
        shown = cell.count is not None and cell.share is not None
        assert (cell.weighted_share is not None) == shown and (cell.weighted_interval is not None) == shown
        assert (cell.interval is not None) == shown
    n = {tuple(g["group"].values()): g["n"] for g in table.groups}
    for group in table.groups:
        assert (group["deff"] is not None) == bool(group["n"])
    for key, cells in itertools.groupby(table.cells, key=lambda c: tuple(c.group.values())):
        shares = [c.weighted_share for c in cells]
        if n[key] and None not in shares:
            assert sum(shares) == pytest.approx(1.0, abs=0.003)  # rounded to a tenth of a point each
