"""Big Five traits and games scored per measure across people, on fixed data computed by hand."""

import pytest

from agentbank.instruments.games import load_games
from agentbank.instruments.model import Instrument, Item, Option
from evaluation.scoring.traits import POPULATION_MEAN, TraitRow, measures, score_traits

SCALE = tuple(Option(c, str(c)) for c in range(1, 6))
TOY = Instrument("toy", "Toy", "", "", (
    Item("a1", "ordinal", "a", SCALE, meta={"trait": "agreeableness", "reverse": False}),
    Item("a2", "ordinal", "b", SCALE, meta={"trait": "agreeableness", "reverse": True}),
    Item("o1", "ordinal", "c", SCALE, meta={"trait": "openness", "reverse": False}),
))  # fmt: skip


def test_a_trait_is_the_mean_of_its_items_reverse_keyed_and_declined_left_out():
    assert measures(TOY, {"a1": 4, "a2": 2, "o1": None}) == {"agreeableness": 4.0}  # (4 + (6 − 2)) / 2
    assert measures(TOY, {"a1": 5, "a2": None, "o1": 1}) == {"agreeableness": 5.0, "openness": 1.0}
    games = measures(load_games(), {"dictator": 2, "trust_receiver": 9, "prisoners_dilemma": 2})
    assert games == {"dictator": 0.4, "trust_receiver": 1.0, "prisoners_dilemma": 0.0}


def test_correlation_error_and_baseline_by_hand():
    own = {
        "p1": {1: {"toy:a1": 1, "toy:a2": 5}, 2: {"toy:a1": 2, "toy:a2": 5}},  # trait 1, retest 1.5
        "p2": {1: {"toy:a1": 3, "toy:a2": 3}, 2: {"toy:a1": 3, "toy:a2": 3}},  # 3, 3
        "p3": {1: {"toy:a1": 5, "toy:a2": 1}, 2: {"toy:a1": 4, "toy:a2": 1}},  # 5, 4.5
    }
    rows = [TraitRow(p, "toy", "a1", "interview", v) for p, v in (("p1", 2), ("p2", 2), ("p3", 4))]
    rows += [TraitRow(p, "toy", "a2", "interview", 2) for p in ("p1", "p2", "p3")]  # reversed: 4
    scored = score_traits([TOY], own, rows)["toy"]["agreeableness"]
    # Agent traits: (2 + 4) / 2 = 3, 3, (4 + 4) / 2 = 4 against 1, 3, 5.
    assert scored["people"] == 3
    assert scored["conditions"]["interview"]["mae"] == pytest.approx((2 + 0 + 1) / 3)
    agent_r = 0.8660254  # corr([3, 3, 4], [1, 3, 5])
    assert scored["conditions"]["interview"]["r"] == pytest.approx(agent_r)
    assert scored["retest_r"] == pytest.approx(1.0)  # [1.5, 3, 4.5] is a line of [1, 3, 5]
    assert scored["retest_mae"] == pytest.approx((0.5 + 0 + 0.5) / 3)
    assert scored["conditions"]["interview"]["normalized_r"] == pytest.approx(agent_r)
    # Everyone else's mean: p1 → (3 + 5) / 2 = 4, p2 → 3, p3 → 2.
    assert scored["conditions"][POPULATION_MEAN]["mae"] == pytest.approx((3 + 0 + 3) / 3)
    assert scored["conditions"][POPULATION_MEAN]["r"] == pytest.approx(-1.0)
