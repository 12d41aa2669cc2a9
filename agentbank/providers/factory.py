"""Building the configured providers from the settings, each looked up in its kind's registry (``registry``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentbank.core.errors import ProviderError
from agentbank.core.settings import Settings
from agentbank.providers.chat import CallGate, ChatModel, ChatRequest, ChatResult
from agentbank.providers.embeddings import Embedder
from agentbank.providers.model_packages import SMOLLM2_NAME
from agentbank.providers.registry import Registry
from agentbank.providers.tokens import CHARACTERS, TokenCounter

# A remote endpoint's limit when AGENTBANK_CHAT_TIMEOUT_S is unset; the embedded model's follows its speed.
DEFAULT_REMOTE_TIMEOUT_S = 120.0


CHAT_MODELS: Registry[Callable[[Settings, CallGate | None], ChatModel]] = Registry("chat model")
EMBEDDERS: Registry[Callable[[Settings], Embedder]] = Registry("embedder")


def build_chat_model(settings: Settings, gate: CallGate | None = None) -> ChatModel:
    """The chat model the settings choose (``AGENTBANK_CHAT_PROVIDER``), a remote one behind ``gate``. The caller
    closes it."""
    return CHAT_MODELS[settings.chat_provider](settings, gate)


def build_embedder(settings: Settings) -> Embedder:
    """The embedder the settings choose (``AGENTBANK_EMBEDDER_PROVIDER``). The caller closes it."""
    return EMBEDDERS[settings.embedder_provider](settings)


@CHAT_MODELS.register("embedded")
def _embedded_chat(settings: Settings, gate: CallGate | None) -> ChatModel:
    from agentbank.providers.embedded_llm import EmbeddedChatModel

    return EmbeddedChatModel(settings.embedded_model_path, context_tokens=settings.embedded_context_tokens,
                             threads=settings.embedded_threads, timeout_s=settings.chat_timeout_s)  # fmt: skip


@CHAT_MODELS.register("openai")
def _openai_chat(settings: Settings, gate: CallGate | None) -> ChatModel:
    from agentbank.providers.openai_compat import OpenAICompatibleChatModel

    assert settings.chat_model is not None  # the settings validator guarantees it
    return OpenAICompatibleChatModel(
        model=settings.chat_model,
        base_url=settings.chat_base_url,
        api_key=settings.chat_api_key.get_secret_value() if settings.chat_api_key else None,
        timeout_s=settings.chat_timeout_s or DEFAULT_REMOTE_TIMEOUT_S,
        max_retries=settings.chat_max_retries,
        gate=gate,
    )


@CHAT_MODELS.register("fake")
def _fake_chat(settings: Settings, gate: CallGate | None) -> ChatModel:
    from agentbank.providers.fakes import ScriptedChatModel, echo_minimal

    return ScriptedChatModel(echo_minimal, name="fake")


@EMBEDDERS.register("local")
def _local_embedder(settings: Settings) -> Embedder:
    from agentbank.providers.embeddings import LocalMiniLMEmbedder

    return LocalMiniLMEmbedder(threads=settings.embedded_threads)


@EMBEDDERS.register("openai")
def _openai_embedder(settings: Settings) -> Embedder:
    from agentbank.providers.openai_compat import OpenAICompatibleEmbedder

    assert settings.embedding_model is not None
    return OpenAICompatibleEmbedder(
        model=settings.embedding_model,
        dimension=settings.embedding_dimension,
        base_url=settings.embedding_base_url,
        api_key=settings.embedding_api_key.get_secret_value() if settings.embedding_api_key else None,
        timeout_s=settings.chat_timeout_s or DEFAULT_REMOTE_TIMEOUT_S,
        max_retries=settings.chat_max_retries,
    )


@EMBEDDERS.register("fake")
def _hashing_embedder(settings: Settings) -> Embedder:
    from agentbank.providers.fakes import HashingEmbedder

    return HashingEmbedder(settings.embedding_dimension)


@dataclass
class PlanningModel:
    """The configured chat model's name and token count, without the model: what an estimate plans with
    (the answer cache's keys name the model). Asked anything, it refuses."""

    name: str
    counter: TokenCounter = CHARACTERS

    def complete(self, request: ChatRequest) -> ChatResult:
        raise ProviderError("an estimate asks no model")

    def close(self) -> None:
        pass


# How an estimate names each chat model without loading it (the scripted one is itself: nothing to load).
PLANNERS: dict[str, Callable[[Settings], ChatModel]] = {
    "embedded": lambda s: PlanningModel(SMOLLM2_NAME if s.embedded_model_path is None else s.embedded_model_path.stem),
    "openai": lambda s: PlanningModel(s.chat_model or ""),  # the settings validator guarantees a model
    "fake": build_chat_model,
}


def planning_model(settings: Settings) -> ChatModel:
    """The configured chat model as an estimate sees it; nothing is loaded or connected."""
    return PLANNERS[settings.chat_provider](settings)
