"""Building the configured providers from the settings."""

from __future__ import annotations

from agentbank.providers.chat import CallGate, ChatModel
from agentbank.providers.embeddings import Embedder
from agentbank.settings import Settings

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
