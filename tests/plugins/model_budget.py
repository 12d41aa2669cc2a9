"""Time budgets for tests that run the embedded model, from the speed it shows on this machine now.

A fixed pytest timeout turns a busy laptop into red tests: the same test that takes four minutes on
an idle machine takes twenty beside a browser and a notebook. A test marked
``@pytest.mark.model_budget(prompt_tokens=..., completion_tokens=...)`` (its model calls' worst case)
gets the time those tokens need at the measured speed, times a margin, and never less than the
suite's default. The speed is measured once, by one short call, before the first such test runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import pytest

from agentbank.providers.chat import ChatRequest, Speed
from agentbank.providers.pacing import ASSUMED_SPEED, MARGIN

# Loading the models and the database work around the model calls.
SETUP_S = 120.0
PROBE = [{"role": "user", "content": "Describe a farm in the morning, its animals and its people. " * 12}]


@cache
def measured_speed() -> tuple[Speed, str]:
    """The embedded model's speed now, and where the figure came from."""
    try:
        from agentbank.providers.embedded_llm import EmbeddedChatModel

        chat = EmbeddedChatModel(threads=2, context_tokens=2048)
    except Exception as exc:  # no model here: the slow machine the pacing assumes
        return ASSUMED_SPEED, f"assumed ({type(exc).__name__} loading the model)"
    try:
        speed = chat.complete(ChatRequest(PROBE, max_tokens=32)).speed
    finally:
        chat.close()
    return (speed, "measured") if speed is not None else (ASSUMED_SPEED, "assumed (no speed reported)")


def budget_s(speed: Speed, prompt_tokens: int, completion_tokens: int, default_s: float) -> float:
    """Seconds for a test whose model calls read and write at most these tokens."""
    return max(default_s, SETUP_S + MARGIN * speed.seconds_for(prompt_tokens, completion_tokens))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "model_budget(prompt_tokens, completion_tokens): the test's time limit follows the embedded "
        "model's measured speed for this many tokens",
    )


# A wrapper, first: pytest-timeout reads a test's limit in its own wrapper of this hook.
@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    marker = item.get_closest_marker("model_budget")
    if marker is not None and item.get_closest_marker("timeout") is None:
        set_budget(item, marker)
    yield


def set_budget(item: pytest.Item, marker: pytest.Mark) -> None:
    """Give ``item`` the time its marked tokens need at the measured speed."""
    speed, source = measured_speed()
    default_s = float(item.config.getini("timeout") or 0)
    seconds = budget_s(speed, marker.kwargs["prompt_tokens"], marker.kwargs["completion_tokens"], default_s)
    item.add_marker(pytest.mark.timeout(seconds))
    item.user_properties.append(("model_budget", f"{seconds:.0f} s at {speed.completion_tps:.1f} tokens/s ({source})"))


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if measured_speed.cache_info().currsize:
        speed, source = measured_speed()
        terminalreporter.write_line(
            f"real-model time budgets from the embedded model's speed ({source}): "
            f"{speed.prompt_tps:.0f} prompt and {speed.completion_tps:.1f} completion tokens/s"
        )
