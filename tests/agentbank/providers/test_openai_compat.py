"""The OpenAI-compatible adapters against endpoints mocked with respx (no network, no model)."""

import json

import httpx
import numpy as np
import pytest
import respx

from agentbank.core.errors import ProviderError
from agentbank.providers.chat import ChatRequest
from agentbank.providers.openai_compat import OpenAICompatibleEmbedder
from tests.support.endpoints import BASE, KEY, MESSAGES, SCHEMA, answering, completion, model


def sent(route: respx.Route, n: int = 0) -> dict:
    return json.loads(route.calls[n].request.content)


def test_schema_passed_through_and_usage_parsed(respx_mock):
    endpoint = answering(respx_mock, (200, completion('{"answer": "2"}'), {}))
    result = model([]).complete(ChatRequest(MESSAGES, schema=SCHEMA, temperature=0.3, seed=7, max_tokens=20))
    body = sent(endpoint)
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
    }
    assert body["messages"] == MESSAGES
    assert (body["model"], body["seed"], body["temperature"], body["max_tokens"]) == ("test-model", 7, 0.3, 20)
    assert endpoint.calls[0].request.headers["authorization"] == f"Bearer {KEY}"
    assert result.data == {"answer": "2"}
    assert (result.usage.prompt_tokens, result.usage.cached_tokens, result.usage.completion_tokens) == (120, 100, 7)
    assert result.usage.evaluated_prompt_tokens == 20
    assert result.model == "served-model"


def test_plain_text_without_schema(respx_mock):
    endpoint = answering(respx_mock, (200, completion("I grew up in Ohio."), {}))
    result = model([]).complete(ChatRequest(MESSAGES))
    assert "response_format" not in sent(endpoint)
    assert (result.text, result.data) == ("I grew up in Ohio.", None)


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_retries_rate_limits_and_server_errors(respx_mock, status):
    sleeps: list[float] = []
    busy, fine = (status, {"error": {"message": "busy"}}, {}), (200, completion('{"answer": "1"}'), {})
    endpoint = answering(respx_mock, busy, fine)
    result = model(sleeps, backoff_s=0.25).complete(ChatRequest(MESSAGES, schema=SCHEMA))
    assert result.data == {"answer": "1"}
    assert endpoint.call_count == 2
    assert sleeps == [0.25]


def test_backoff_grows_and_honours_retry_after(respx_mock):
    sleeps: list[float] = []
    answering(
        respx_mock,
        (500, {}, {}),
        (500, {}, {}),
        (429, {}, {"retry-after": "3"}),
        (200, completion('{"answer": "1"}'), {}),
    )
    model(sleeps, backoff_s=0.5, max_retries=3).complete(ChatRequest(MESSAGES, schema=SCHEMA))
    assert sleeps == [0.5, 1.0, 3.0]


@pytest.mark.parametrize(("status", "hint"), [(400, None), (401, "API key"), (404, "model name"), (422, None)])
def test_client_errors_are_never_retried(respx_mock, status, hint):
    sleeps: list[float] = []
    endpoint = answering(respx_mock, (status, {"error": {"message": "bad request"}}, {}))
    with pytest.raises(ProviderError) as raised:
        model(sleeps).complete(ChatRequest(MESSAGES, schema=SCHEMA))
    assert endpoint.call_count == 1 and sleeps == []
    assert raised.value.status == status and not raised.value.retryable
    if hint:
        assert hint in raised.value.hint


def test_gives_up_after_max_retries(respx_mock):
    sleeps: list[float] = []
    endpoint = answering(respx_mock, *[(503, {}, {})] * 3)
    with pytest.raises(ProviderError) as raised:
        model(sleeps, max_retries=2).complete(ChatRequest(MESSAGES))
    assert endpoint.call_count == 3 and len(sleeps) == 2
    assert raised.value.status == 503 and raised.value.retryable


def test_connection_errors_retried_then_mapped(respx_mock):
    endpoint = answering(respx_mock, httpx.ConnectError("refused"), httpx.ConnectError("refused"))
    with pytest.raises(ProviderError, match="could not be reached"):
        model([], max_retries=1).complete(ChatRequest(MESSAGES))
    assert endpoint.call_count == 2


def test_errors_carry_no_secret_or_prompt_text(respx_mock):
    answering(respx_mock, (401, {"error": {"message": f"bad key {KEY} for You are Ada."}}, {}))
    with pytest.raises(ProviderError) as raised:
        model([]).complete(ChatRequest(MESSAGES))
    assert KEY not in str(raised.value) and "Ada" not in str(raised.value)


@pytest.mark.parametrize("content", ["not json", '{"answer": "3"}', '{"answer": "1", "extra": 1}'])
def test_output_off_the_schema_is_an_error(respx_mock, content):
    answering(respx_mock, (200, completion(content), {}))
    with pytest.raises(ProviderError):
        model([]).complete(ChatRequest(MESSAGES, schema=SCHEMA))


def embeddings_body(vectors):
    # Deliberately out of order: the adapter must sort by index.
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)][::-1]
    return {"object": "list", "data": data, "model": "e", "usage": {"prompt_tokens": 3, "total_tokens": 3}}


def test_embedder_orders_and_normalizes(respx_mock):
    endpoint = answering(respx_mock, (200, embeddings_body([[3.0, 4.0], [0.0, 2.0]]), {}), path="/embeddings")
    embedder = OpenAICompatibleEmbedder(
        model="e",
        dimension=2,
        base_url=BASE,
        http_client=httpx.Client(),
    )
    vectors = embedder.embed(["a", "b"])
    np.testing.assert_allclose(vectors, [[0.6, 0.8], [0.0, 1.0]], atol=1e-6)
    assert sent(endpoint)["input"] == ["a", "b"]


def test_embedder_rejects_wrong_dimension(respx_mock):
    answering(respx_mock, (200, embeddings_body([[1.0, 0.0, 0.0]]), {}), path="/embeddings")
    embedder = OpenAICompatibleEmbedder(
        model="e",
        dimension=2,
        base_url=BASE,
        http_client=httpx.Client(),
    )
    with pytest.raises(ProviderError, match="shape"):
        embedder.embed(["a"])


def test_cut_off_answers_are_named_but_complete_ones_kept(respx_mock):
    from agentbank.core.errors import TruncatedOutputError

    cut = completion('{"answer": "1', completion_tokens=5)
    cut["choices"][0]["finish_reason"] = "length"
    exact = completion('{"answer": "1"}')
    exact["choices"][0]["finish_reason"] = "length"  # the grammar finished on the last allowed token
    answering(respx_mock, (200, cut, {}), (200, exact, {}))
    with pytest.raises(TruncatedOutputError) as cut_off:
        model([]).complete(ChatRequest(MESSAGES, schema=SCHEMA))
    # What was written travels with the error for a caller to read, never in its message.
    assert cut_off.value.partial == '{"answer": "1' and '"answer"' not in str(cut_off.value)
    assert model([]).complete(ChatRequest(MESSAGES, schema=SCHEMA)).data == {"answer": "1"}
