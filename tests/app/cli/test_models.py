"""`agentbank evaluate --models`: how a model is named on the command line."""

from __future__ import annotations

import pytest

from agentbank.core.settings import Settings
from app.cli.evaluate import with_model
from tests.support.factories import SECRET


def test_a_model_is_named_by_provider_and_endpoint():
    settings = Settings(secret_key=SECRET)
    assert with_model(settings, "embedded").chat_provider == "embedded"
    assert with_model(settings, "fake").chat_provider == "fake"
    remote = with_model(settings, "openai:qwen2.5-7b@http://127.0.0.1:8000/v1")
    assert (remote.chat_provider, remote.chat_model, remote.chat_base_url) == (
        "openai", "qwen2.5-7b", "http://127.0.0.1:8000/v1")  # fmt: skip
    assert settings.chat_provider == "fake"  # the configured settings are left as they were
    for wrong in ("openai:", "telepathy", "embedded:big"):
        with pytest.raises(ValueError, match="names no model"):
            with_model(settings, wrong)
