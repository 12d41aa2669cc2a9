"""Cutting a model call in flight: the call fails at once instead of waiting for the model, and no
retry sends it again."""

import threading
import time

import pytest

from agentbank.core.errors import ProviderError
from agentbank.providers.chat import ChatRequest
from agentbank.providers.openai_compat import OpenAICompatibleChatModel
from tests.support.endpoints import MESSAGES, SlowEndpoint


def test_abort_cuts_a_call_in_flight_and_refuses_its_retries(slow_endpoint):
    SlowEndpoint.delay = 30.0
    model = OpenAICompatibleChatModel(model="slow", base_url=slow_endpoint, max_retries=3, backoff_s=0.01)
    outcome: dict[str, object] = {}

    def call() -> None:
        began = time.monotonic()
        try:
            model.complete(ChatRequest(MESSAGES, max_tokens=20))
        except ProviderError as exc:
            outcome["error"] = exc
        outcome["seconds"] = time.monotonic() - began

    thread = threading.Thread(target=call)
    thread.start()
    time.sleep(0.5)  # the request is on the wire, the endpoint is sleeping
    model.abort()
    thread.join(5)
    assert not thread.is_alive()
    assert isinstance(outcome["error"], ProviderError)
    assert outcome["seconds"] < 3  # not the endpoint's 30 s, nor a retry of it
    with pytest.raises(ProviderError, match="stopped"):
        model.complete(ChatRequest(MESSAGES, max_tokens=20))
    model.close()


@pytest.mark.slow
def test_closing_the_embedded_model_cuts_its_call_in_flight():
    from agentbank.providers.embedded_llm import EmbeddedChatModel

    model = EmbeddedChatModel(context_tokens=2048)
    errors: list[Exception] = []

    def call() -> None:
        try:
            model.complete(
                ChatRequest([{"role": "user", "content": "Write a long story about a dog. " * 40}], max_tokens=1500)
            )
        except ProviderError as exc:
            errors.append(exc)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    time.sleep(2)  # generating now
    closer = threading.Thread(target=model.close, daemon=True)
    began = time.monotonic()
    closer.start()
    closer.join(15)  # without the cut, closing waits for the whole generation
    assert not closer.is_alive() and time.monotonic() - began < 15
    caller.join(5)
    assert not caller.is_alive() and errors
