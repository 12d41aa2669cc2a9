"""The offline default chat model: a GGUF model served by llama.cpp inside this process.

xllamacpp runs llama.cpp's OpenAI-compatible server on a loopback port, so the same adapter that talks
to hosted endpoints talks to the embedded model too. The server keeps the prompt prefix of the last
request in its KV cache, which is what makes the second and later survey items of one agent cheap;
``cache_prompt`` must stay on. Each call's time limit follows the speed the server reports
(``pacing``), unless ``AGENTBANK_CHAT_TIMEOUT_S`` fixes it.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

from agentbank.core.errors import ConfigurationError, ProviderTimeoutError
from agentbank.providers.chat import ChatRequest, ChatResult
from agentbank.providers.model_packages import SMOLLM2_NAME, smollm2_path
from agentbank.providers.openai_compat import OpenAICompatibleChatModel
from agentbank.providers.pacing import Pacer

TIMEOUT_HINT = (
    "this machine runs the model too slowly for the call: set AGENTBANK_CHAT_TIMEOUT_S higher, lower "
    "AGENTBANK_REFLECTION_WORD_BUDGET, or use a remote endpoint (AGENTBANK_CHAT_PROVIDER=openai)"
)


class PacedChatModel:
    """A local model's OpenAI-compatible client whose every call gets a time limit fitted to it."""

    def __init__(self, client: OpenAICompatibleChatModel, pacer: Pacer) -> None:
        self.client = client
        self.pacer = pacer
        self.name = client.name

    def complete(self, request: ChatRequest) -> ChatResult:
        """One completion within the time the pacer allows; a ``ProviderTimeoutError`` says what it was."""
        limit = self.pacer.limit(request.messages, request.max_tokens)
        try:
            result = self.client.complete(request, timeout_s=limit.seconds)
        except ProviderTimeoutError as exc:
            raise ProviderTimeoutError(
                f"the embedded model did not finish within {limit.describe()}", hint=TIMEOUT_HINT
            ) from exc
        self.pacer.observe(result.speed)
        return result

    def abort(self) -> None:
        """Cut the calls in flight; the server stops generating for them."""
        self.client.abort()

    def close(self) -> None:
        """Close the client."""
        self.client.close()


class EmbeddedChatModel:
    """A llama.cpp server on loopback, with a per-process API key, behind the OpenAI adapter."""

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        context_tokens: int = 8192,
        threads: int = 2,
        name: str | None = None,
        timeout_s: float | None = None,
    ) -> None:
        import xllamacpp

        path = model_path or smollm2_path()
        if not path.is_file():
            raise ConfigurationError(f"no model file at {path}", hint="check AGENTBANK_EMBEDDED_MODEL_PATH")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = context_tokens
        params.n_parallel = 1  # one slot: every request reuses the same prefix cache
        params.cache_prompt = True
        # The server notices a cut call (a stopping worker hangs up) only between logical batches: at its
        # default of 2,048 prompt tokens that is 10-15 s on two cores, at the physical batch size 3-4 s.
        params.n_batch = params.n_ubatch
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.verbosity = -1
        params.endpoint_metrics = False
        # The port is on loopback, but other local users could still reach it.
        key = secrets.token_urlsafe(24)
        params.api_keys = [key]
        began = time.perf_counter()
        try:
            self._server: Any = xllamacpp.Server(params)
        except Exception as exc:  # the binding raises plain runtime errors
            raise ConfigurationError(
                f"the embedded model did not load from {path.name} ({type(exc).__name__})"
            ) from exc
        self.load_seconds = time.perf_counter() - began
        self.name = name or (SMOLLM2_NAME if model_path is None else path.stem)
        self.base_url = f"{self._server.listening_address}/v1"
        # No retry inside a call: the same request after a timeout would time out again; the caller's
        # retry (a build's next attempt) sends a lighter one.
        client = OpenAICompatibleChatModel(
            model=self.name, base_url=self.base_url, api_key=key, max_retries=0, name=self.name
        )
        self._client = PacedChatModel(client, Pacer(timeout_s))

    def complete(self, request: ChatRequest) -> ChatResult:
        """One completion from the embedded model (see ``OpenAICompatibleChatModel.complete``)."""
        return self._client.complete(request)

    def abort(self) -> None:
        """Cut the calls in flight from another thread. A call still generating would hold ``close``
        (and the process's exit) until it finished."""
        self._client.abort()

    def close(self) -> None:
        """Stop the server and free the model. A call still in flight (an HTTP request the server was
        stopped beneath, say) is cut first: stopping the server waits for its generation otherwise."""
        self._client.abort()
        self._client.close()
        self._server = None
