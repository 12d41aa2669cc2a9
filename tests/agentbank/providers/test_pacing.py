"""A local model's time limits: derived from its measured speed and each call's budget, or fixed by the
setting; a call slower than its limit fails with a hint, and one within it succeeds."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentbank.core.errors import ProviderTimeoutError
from agentbank.providers.chat import ChatRequest, Speed
from agentbank.providers.embedded_llm import PacedChatModel
from agentbank.providers.openai_compat import OpenAICompatibleChatModel
from agentbank.providers.pacing import MAX_DERIVED_TIMEOUT_S, MIN_TIMEOUT_S, Pacer

MESSAGES = [{"role": "system", "content": "You are Ada. " * 100}, {"role": "user", "content": "Tell me."}]


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


class SlowEndpoint(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that takes ``delay`` seconds and reports llama.cpp's timings."""

    delay = 0.0

    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        time.sleep(self.delay)
        body = json.dumps({
            "id": "c1", "object": "chat.completion", "created": 0, "model": "slow",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 2, "total_tokens": 42},
            "timings": {"prompt_per_second": 20.0, "predicted_per_second": 4.0},
        }).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def slow_endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowEndpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    SlowEndpoint.delay = 0.0


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
