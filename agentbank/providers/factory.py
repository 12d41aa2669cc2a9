"""Building the configured providers from the settings."""

from __future__ import annotations

from dataclasses import dataclass

from agentbank.core.errors import ProviderError
from agentbank.core.settings import Settings
from agentbank.providers.chat import CallGate, ChatModel, ChatRequest, ChatResult
from agentbank.providers.embeddings import Embedder
from agentbank.providers.model_packages import SMOLLM2_NAME
from agentbank.providers.tokens import CHARACTERS, TokenCounter

# A remote endpoint's limit when AGENTBANK_CHAT_TIMEOUT_S is unset; the embedded model's follows its speed.
DEFAULT_REMOTE_TIMEOUT_S = 120.0


def build_chat_model(settings: Settings, gate: CallGate | None = None) -> ChatModel:
    """The chat model the settings choose, a remote one behind ``gate``. The caller closes it."""
    if settings.chat_provider == "embedded":
        from agentbank.providers.embedded_llm import EmbeddedChatModel

        return EmbeddedChatModel(
            settings.embedded_model_path,
            context_tokens=settings.embedded_context_tokens,
            threads=settings.embedded_threads,
            timeout_s=settings.chat_timeout_s,
        )
    if settings.chat_provider == "openai":
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
    from agentbank.providers.fakes import ScriptedChatModel, echo_minimal

    return ScriptedChatModel(echo_minimal, name="fake")


def build_embedder(settings: Settings) -> Embedder:
    """The embedder the settings choose. The caller closes it."""
    if settings.embedder_provider == "local":
        from agentbank.providers.embeddings import LocalMiniLMEmbedder

        return LocalMiniLMEmbedder(threads=settings.embedded_threads)
    if settings.embedder_provider == "openai":
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


def planning_model(settings: Settings) -> ChatModel:
    """The configured chat model as an estimate sees it; nothing is loaded or connected."""
    if settings.chat_provider == "fake":
        return build_chat_model(settings)  # the scripted model itself: nothing to load, and its own count
    if settings.chat_provider == "openai":
        assert settings.chat_model is not None  # the settings validator guarantees it
        return PlanningModel(settings.chat_model)
    path = settings.embedded_model_path
    return PlanningModel(SMOLLM2_NAME if path is None else path.stem)
