"""Cutting a model call in flight: the call fails at once instead of waiting for the model, and no
retry sends it again."""

import threading
import time

import pytest

from agentbank.errors import ProviderError
from agentbank.providers.openai_compat import OpenAICompatibleChatModel
from tests.agentbank.providers.test_pacing import MESSAGES, SlowEndpoint, slow_endpoint  # noqa: F401 - fixture


def test_abort_cuts_a_call_in_flight_and_refuses_its_retries(slow_endpoint):  # noqa: F811 - the fixture
    SlowEndpoint.delay = 30.0
    model = OpenAICompatibleChatModel(model="slow", base_url=slow_endpoint, max_retries=3, backoff_s=0.01)
    outcome: dict[str, object] = {}

    def call() -> None:
        began = time.monotonic()
        try:
            model.complete(MESSAGES, max_tokens=20)
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
        model.complete(MESSAGES, max_tokens=20)
    model.close()
