"""A local model's time limits: derived from its measured speed and each call's budget, or fixed by the
setting; a call slower than its limit fails with a hint, and one within it succeeds."""

import pytest

from agentbank.core.errors import ProviderTimeoutError
from agentbank.providers.chat import ChatRequest, Speed
from agentbank.providers.embedded_llm import PacedChatModel
from agentbank.providers.openai_compat import OpenAICompatibleChatModel
from agentbank.providers.pacing import MAX_DERIVED_TIMEOUT_S, MIN_TIMEOUT_S, Pacer
from tests.support.endpoints import MESSAGES, SlowEndpoint


def test_the_limit_grows_with_the_token_budget_and_shrinks_with_speed():
    pacer = Pacer(margin=2.0)
    pacer.observe(Speed(prompt_tps=100.0, completion_tps=10.0))
    short, long = pacer.limit(MESSAGES, 100), pacer.limit(MESSAGES, 1200)
    assert long.seconds > short.seconds
    assert long.seconds == pytest.approx(2.0 * (long.prompt_tokens / 100 + 1200 / 10))
    pacer.observe(Speed(prompt_tps=200.0, completion_tps=40.0))  # faster: taken gradually
    assert pacer.speed.completion_tps == pytest.approx(25.0)
    pacer.observe(Speed(prompt_tps=10.0, completion_tps=1.0))  # slower: taken at once
    assert pacer.speed == Speed(10.0, 1.0)
    # 1 token/s would need over an hour for 1,800 tokens: the limit stops at its ceiling instead.
    assert pacer.limit(MESSAGES, 1800).seconds == MAX_DERIVED_TIMEOUT_S
    assert "1800 completion tokens" in pacer.limit(MESSAGES, 1800).describe()


def test_the_setting_fixes_the_limit_and_short_calls_keep_a_floor():
    assert Pacer(7.5).limit(MESSAGES, 1800).seconds == 7.5
    fast = Pacer()
    fast.observe(Speed(10_000.0, 10_000.0))
    assert fast.limit(MESSAGES, 10).seconds == MIN_TIMEOUT_S


def paced(url: str, timeout_s: float) -> PacedChatModel:
    return PacedChatModel(OpenAICompatibleChatModel(model="slow", base_url=url, max_retries=0), Pacer(timeout_s))


def test_a_call_slower_than_its_limit_fails_with_the_limit_and_a_hint(slow_endpoint):
    SlowEndpoint.delay = 1.5
    model = paced(slow_endpoint, 0.3)
    with pytest.raises(ProviderTimeoutError) as caught:
        model.complete(ChatRequest(MESSAGES, max_tokens=20))
    assert "0.3 s (AGENTBANK_CHAT_TIMEOUT_S)" in caught.value.message
    assert "AGENTBANK_CHAT_TIMEOUT_S" in caught.value.hint and "AGENTBANK_CHAT_PROVIDER=openai" in caught.value.hint


def test_the_same_call_finishes_when_the_limit_allows_and_its_speed_is_learned(slow_endpoint):
    SlowEndpoint.delay = 0.5
    model = paced(slow_endpoint, 5.0)
    result = model.complete(ChatRequest(MESSAGES, max_tokens=20))
    assert result.text == "hi" and result.speed == Speed(20.0, 4.0)
    assert model.pacer.measured and model.pacer.speed == Speed(20.0, 4.0)
