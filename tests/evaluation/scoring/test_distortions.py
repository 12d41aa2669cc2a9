"""The distortions and the fidelity of aggregates, each figure computed by hand on four people."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentbank.instruments.gss import load_gss
from agentbank.publication.fidelity import drawn_fidelity, jensen_shannon, total_variation
from evaluation.runs.records import ResultRow
from evaluation.scoring.distortions import directions, ideological_shift, measure_distortions, sentences, stereotyping
from evaluation.scoring.fidelity import run_fidelity
from evaluation.scoring.traits import game_sentences, score_measure

GSS = load_gss()
PEOPLE = ("a", "b", "c", "d")
# cappun: two options (a scale of 0 and 1); natenvir: ordinal 1–3 (0, ½, 1); trust: categorical 1–3 (one-hot).
AGENT = {"cappun": (1, 1, 2, 2), "natenvir": (2, 2, 2, 2), "trust": (1, 2, 3, 1)}
OWN = {"cappun": (1, 2, 2, 2), "natenvir": (1, 2, 3, 3), "trust": (1, 2, 3, 3)}
CELL = {"cappun": (1, 1, 1, 2), "natenvir": (2, 2, 2, 2)}
IDEOLOGY = {"a": {"polviews": 1}, "b": {"polviews": 2}, "c": {"polviews": 6}, "d": {"polviews": 7}}


def rows_of(condition: str, answers: dict[str, tuple[int, ...]]) -> list[ResultRow]:
    return [ResultRow(p, item, condition, codes[n], OWN[item][n], OWN[item][n])
            for item, codes in answers.items() for n, p in enumerate(PEOPLE)]  # fmt: skip


ROWS = rows_of("x", AGENT) + rows_of("cell-mode", CELL)


def pearson(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    return cov / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))


def test_correlation_and_spread_by_hand():
    found = measure_distortions(ROWS, GSS, IDEOLOGY, resamples=200, min_direction_people=2)["x"]
    # cappun on 0/1: r of (0,0,1,1) with (0,1,1,1) is 1/√3; variances ¼ and 3/16.
    cappun = pearson([0, 0, 1, 1], [0, 1, 1, 1])
    assert cappun == pytest.approx(1 / math.sqrt(3))
    # natenvir: the agents give everyone ½ (no information: r 0, spread 0).
    # trust, one-hot over its three options, each option centred on its own share: covariances 1/8, 3/16, 1/8
    # summed, over the variances (3/16 + 3/16 + 1/4 on either side) summed.
    trust = (1 / 8 + 3 / 16 + 1 / 8) / math.sqrt((1 / 4 + 3 / 16 + 3 / 16) * (3 / 16 + 3 / 16 + 1 / 4))
    assert trust == pytest.approx(0.7)
    mean_r = math.tanh((math.atanh(cappun) + 0 + math.atanh(trust)) / 3)
    assert found["correlation"]["value"] == pytest.approx(mean_r)
    # Spread: cappun ¼ ÷ 3/16; natenvir 0; trust Gini–Simpson 1 − (¼ + 1/16 + 1/16) on both sides.
    assert found["spread"]["value"] == pytest.approx(((0.25 / (3 / 16)) + 0 + 1) / 3)
    for figure in (found["correlation"], found["spread"]):
        low, high = figure["interval"]
        assert low <= high and np.isfinite([low, high]).all()
    # The people's own retest, scored alike: here they repeat themselves exactly.
    retest = measure_distortions(ROWS, GSS, IDEOLOGY, resamples=50, min_direction_people=2)["retest"]
    assert retest["correlation"]["value"] == pytest.approx(math.tanh(math.atanh(0.999999)))
    assert retest["spread"]["value"] == pytest.approx(1.0)


def test_stereotyping_by_hand():
    cells = {(r.person, r.item): r.predicted for r in ROWS if r.condition == "cell-mode"}
    found = stereotyping([r for r in ROWS if r.condition == "x"], cells)
    # The agents match the cell's mode on a: 2/2, b: 2/2, c: 1/2, d: 2/2; the people on a: 1/2, b: 1/2, c: 0, d: 1/2.
    assert found["agents"] == pytest.approx((1 + 1 + 0.5 + 1) / 4)
    assert found["people_share"] == pytest.approx((0.5 + 0.5 + 0 + 0.5) / 4)
    assert found["value"] == pytest.approx(0.5) and found["interval"] == pytest.approx((0.5, 0.5))


def test_ideological_shift_by_hand():
    mine = [r for r in ROWS if r.condition == "x"]
    direction = directions(ROWS, GSS, IDEOLOGY, least=2)
    # Both scales rise with the people's own polviews (1, 2, 6, 7); trust has no order.
    assert direction == {"cappun": 1.0, "natenvir": 1.0}
    found = ideological_shift(mine, GSS, IDEOLOGY, direction)
    # Per person, (cappun gap + natenvir gap) / 2 on 0–1: a (0 + ½)/2, b (−1 + 0)/2, c (0 − ½)/2, d (0 − ½)/2.
    per_person = {"a": 0.25, "b": -0.5, "c": -0.25, "d": -0.25}
    assert found["value"] == pytest.approx(sum(per_person.values()) / 4)
    assert found["by_ideology"]["liberal"]["value"] == pytest.approx((0.25 - 0.5) / 2)
    assert found["by_ideology"]["conservative"]["value"] == pytest.approx(-0.25)
    assert found["by_ideology"]["moderate"] is None
    low, high = found["interval"]
    assert low <= found["value"] <= high
    said = " ".join(sentences("x", {"ideology": found}))
    assert "toward the liberal end" in said and "liberal people -0.125" in said


def js_by_hand(p: list[float], q: list[float]) -> float:
    m = [(a + b) / 2 for a, b in zip(p, q, strict=True)]
    kl = lambda u: sum(a * math.log2(a / c) for a, c in zip(u, m, strict=True) if a > 0)  # noqa: E731
    return (kl(p) + kl(q)) / 2


def test_fidelity_by_hand_weighted_and_against_a_reference():
    rows = rows_of("x", {"cappun": AGENT["cappun"], "natenvir": AGENT["natenvir"]})
    found = run_fidelity(rows, GSS, resamples=200)["against_people"]["x"]
    # cappun: agents (½, ½), people (¼, ¾); natenvir: agents (0, 1, 0), people (¼, ¼, ½).
    tvd = (0.25 + 0.75) / 2
    jsd = (js_by_hand([0.5, 0.5], [0.25, 0.75]) + js_by_hand([0, 1, 0], [0.25, 0.25, 0.5])) / 2
    assert found["tvd"]["value"] == pytest.approx(tvd) and found["jsd"]["value"] == pytest.approx(jsd)
    assert found["item_tvd"] == {"cappun": 0.25, "natenvir": 0.75}
    assert found["tvd"]["interval"][0] <= found["tvd"]["interval"][1]
    # Weighted (a counts twice): cappun agents (3/5, 2/5), people (2/5, 3/5).
    weighted = run_fidelity(rows, GSS, {"a": 2.0, "b": 1.0, "c": 1.0, "d": 1.0}, resamples=50)
    assert weighted["against_people"]["x"]["item_tvd"]["cappun"] == pytest.approx(0.2)
    # The GSS's own counts as the population: cappun (¾, ¼).
    against = run_fidelity(rows, GSS, reference={"cappun": {1: 30, 2: 10}}, resamples=50)["against_reference"]
    assert against["x"]["tvd"]["value"] == pytest.approx(0.25) and against["x"]["items"] == 1
    assert against["people"]["tvd"]["value"] == pytest.approx(0.5)
    assert against["people"]["jsd"]["value"] == pytest.approx(js_by_hand([0.25, 0.75], [0.75, 0.25]))


def test_distances_and_the_drawn_interval_of_a_published_table():
    p, q = np.array([0.5, 0.5]), np.array([0.75, 0.25])
    assert total_variation(p, q) == pytest.approx(0.25)
    assert jensen_shannon(p, q) == pytest.approx(js_by_hand([0.5, 0.5], [0.75, 0.25]))
    found = drawn_fidelity({1: 0.5, 2: 0.5}, 400, {1: 750, 2: 250})
    assert found["tvd"] == pytest.approx(0.25) and found["jsd"] == pytest.approx(jensen_shannon(p, q), abs=1e-4)
    assert found["tvd_interval"][0] < 0.25 < found["tvd_interval"][1]


def test_the_games_shift_toward_the_self_interested_choice_by_hand():
    truth, retest = {"a": 0.4, "b": 0.6, "c": 0.5}, {"a": 0.4, "b": 0.6, "c": 0.5}
    found = score_measure(truth, retest, {"interview": {"a": 0.2, "b": 0.2, "c": 0.2}})["conditions"]["interview"]
    assert found["shift"] == pytest.approx((-0.2 - 0.4 - 0.3) / 3) and found["mae"] == pytest.approx(0.3)
    low, high = found["shift_interval"]
    assert low <= found["shift"] <= high
    (said,) = game_sentences({"games": {"dictator": {"conditions": {"interview": found}}}})
    assert "+0.30" in said and "hyper-rational" in said


def test_one_answer_for_everyone_correlates_with_nobody():
    """A condition that gives everyone the same option says nothing of who answers what: r is 0 on every item,
    a categorical one included (whose options' shares alone would otherwise pass for a correlation)."""
    rows = rows_of("same", {"cappun": (1, 1, 1, 1), "trust": (3, 3, 3, 3)})
    found = measure_distortions(rows, GSS, IDEOLOGY, resamples=20)["same"]
    assert found["correlation"]["value"] == 0 and found["spread"]["value"] == 0
