import numpy as np
import pytest

from agentbank.core.errors import ProviderError
from agentbank.providers.chat import ChatRequest
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel, echo_minimal, minimal_answer

SCHEMA = {
    "type": "object",
    "properties": {"code": {"type": "integer", "enum": [3, 1]}, "why": {"type": "string", "minLength": 2}},
    "required": ["code", "why"],
}


def test_scripted_replies_in_order_and_history_kept():
    model = ScriptedChatModel([{"code": 1, "why": "ok"}, "plain", ProviderError("down")])
    first = model.complete(ChatRequest([{"role": "user", "content": "q1"}], schema=SCHEMA))
    assert first.data == {"code": 1, "why": "ok"}
    assert model.complete(ChatRequest([{"role": "user", "content": "q2"}])).text == "plain"
    with pytest.raises(ProviderError, match="down"):
        model.complete(ChatRequest([{"role": "user", "content": "q3"}]))
    assert [c["messages"][0]["content"] for c in model.calls] == ["q1", "q2", "q3"]
    with pytest.raises(ProviderError, match="no replies left"):
        model.complete(ChatRequest([{"role": "user", "content": "q4"}]))


def test_scripted_reply_off_schema_fails_like_a_real_adapter():
    model = ScriptedChatModel([{"code": 2, "why": "no"}])
    with pytest.raises(ProviderError, match="schema"):
        model.complete(ChatRequest([{"role": "user", "content": "q"}], schema=SCHEMA))


def test_usage_counts_shared_prefix_as_cached():
    model = ScriptedChatModel(echo_minimal)
    prefix = [{"role": "system", "content": "a long shared transcript of ten words in it here"}]
    first = model.complete(ChatRequest([*prefix, {"role": "user", "content": "item one"}]))
    second = model.complete(ChatRequest([*prefix, {"role": "user", "content": "item two"}]))
    assert first.usage.cached_tokens == 0
    assert second.usage.cached_tokens == second.usage.prompt_tokens - 1  # all but the last word


def test_minimal_answer_is_valid():
    assert minimal_answer(SCHEMA) == {"code": 3, "why": "xx"}
    assert minimal_answer({"type": "number", "minimum": 0.5}) == 0.5


def test_hashing_embedder_is_deterministic_and_related_texts_are_closer():
    embedder = HashingEmbedder(64)
    a, b, c = embedder.embed(["bread farm grandmother", "grandmother baked bread", "bond interest rate"])
    np.testing.assert_allclose(embedder.embed(["bread farm grandmother"])[0], a)
    assert np.isclose(np.linalg.norm(a), 1.0)
    assert a @ b > a @ c
