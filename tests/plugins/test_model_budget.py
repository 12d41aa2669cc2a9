"""Real-model tests get the time their tokens need at the speed measured now: a slower machine, a
longer limit, never shorter than the suite's default."""

import pytest

from agentbank.providers.chat import Speed
from tests.plugins import model_budget

IDLE, BUSY = Speed(prompt_tps=200.0, completion_tps=40.0), Speed(prompt_tps=40.0, completion_tps=4.0)


def test_a_slower_machine_gets_a_longer_limit_never_below_the_default():
    idle = model_budget.budget_s(IDLE, 20_000, 16_000, 600)
    busy = model_budget.budget_s(BUSY, 20_000, 16_000, 600)
    assert busy > idle > 600
    assert busy == pytest.approx(model_budget.SETUP_S + model_budget.MARGIN * (500 + 4000))
    assert model_budget.budget_s(IDLE, 10, 10, 600) == 600


def test_the_marker_becomes_the_tests_timeout(request, monkeypatch):
    monkeypatch.setattr(model_budget, "measured_speed", lambda: (BUSY, "measured"))
    marker = pytest.mark.model_budget(prompt_tokens=4_000, completion_tokens=2_000).mark
    model_budget.set_budget(request.node, marker)
    expected = model_budget.SETUP_S + model_budget.MARGIN * (100 + 500)
    assert request.node.get_closest_marker("timeout").args[0] == pytest.approx(expected)
