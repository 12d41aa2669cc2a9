"""Providers are chosen from registries by the settings' names: every name a setting allows has its builder,
and an unknown name is a configuration error that lists the known ones."""

from typing import get_args

import pytest

from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings
from agentbank.providers.factory import CHAT_MODELS, EMBEDDERS, PLANNERS, build_chat_model, build_embedder
from agentbank.providers.registry import Registry
from interviewer.providers import SPEAKERS, TRANSCRIBERS


def allowed(field: str) -> set[str]:
    return set(get_args(Settings.model_fields[field].annotation))


def test_every_name_a_setting_allows_has_a_builder():
    assert set(CHAT_MODELS.names) == allowed("chat_provider") == set(PLANNERS)
    assert set(EMBEDDERS.names) == allowed("embedder_provider")
    assert set(TRANSCRIBERS.names) == allowed("transcriber")
    assert set(SPEAKERS.names) == allowed("speaker")


def test_the_fakes_are_built_by_name(tmp_path):
    settings = Settings(data_dir=tmp_path, chat_provider="fake", embedder_provider="fake")
    assert build_chat_model(settings).name == "fake"
    assert len(build_embedder(settings).embed(["a"])[0]) == settings.embedding_dimension


def test_an_unknown_name_says_which_are_known():
    registry: Registry = Registry("widget")
    registry.register("one")(lambda: None)
    with pytest.raises(ConfigurationError, match="no widget named 'two'; the bank knows one"):
        registry["two"]
    with pytest.raises(ValueError, match="registered already"):
        registry.register("one")(lambda: None)
