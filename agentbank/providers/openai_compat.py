"""Adapters for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, the llama.cpp server).

SDK exceptions become one ``ProviderError`` here. Rate limits, server errors and lost connections
are retried with exponential backoff; other 4xx answers are the caller's fault and never retried.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import httpx
import jsonschema
import numpy as np
import openai
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from agentbank.core.errors import ProviderError, ProviderTimeoutError, TruncatedOutputError
from agentbank.providers.chat import CallGate, ChatRequest, ChatResult, Speed, Usage
from agentbank.providers.chat_requests import request_body
from agentbank.providers.transport import AbortableTransport

T = TypeVar("T")

MAX_BACKOFF_S = 30.0


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _translate(exc: Exception, what: str) -> ProviderError:
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retryable = status == 429 or status >= 500
        hint = {
            401: "check the API key setting",
            403: "the key is not allowed to use this model",
            404: "check the base URL and the model name",
        }.get(status)
        return ProviderError(f"{what} answered HTTP {status}", hint=hint, status=status, retryable=retryable)
    if isinstance(exc, openai.APITimeoutError):
        return ProviderTimeoutError(f"{what} did not answer in time", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return ProviderError(f"{what} could not be reached", hint="check the base URL", retryable=True)
    return ProviderError(f"{what} failed ({type(exc).__name__})")


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, ProviderError) and exc.retryable


def call_with_retries(
    call: Callable[[], T],
    *,
    what: str,
    max_retries: int,
    backoff_s: float,
    sleep: Callable[[float], None] = time.sleep,
    on_retry_after: Callable[[float], None] | None = None,
) -> T:
    """Run ``call``; retry on 429, 5xx and connection errors with exponential backoff (tenacity).

    A server's ``Retry-After`` lengthens the wait, never beyond ``MAX_BACKOFF_S``, and is passed to
    ``on_retry_after`` (a limit shared with the bank's other processes).
    """

    def translated() -> T:
        try:
            return call()
        except openai.OpenAIError as exc:
            raise _translate(exc, what) from exc

    def wait(state: RetryCallState) -> float:
        delay = min(backoff_s * 2 ** (state.attempt_number - 1), MAX_BACKOFF_S)
        failure = state.outcome.exception() if state.outcome is not None else None
        cause = failure.__cause__ if failure is not None else None
        if isinstance(cause, openai.APIStatusError):
            asked = _retry_after(cause)
            delay = min(max(delay, asked or 0.0), MAX_BACKOFF_S)
            if asked and on_retry_after is not None:
                on_retry_after(min(asked, MAX_BACKOFF_S))
        return delay

    retrying = Retrying(
        stop=stop_after_attempt(max_retries + 1),
        wait=wait,
        retry=retry_if_exception(_retryable),
        sleep=sleep,
        reraise=True,
    )
    return retrying(translated)


def openai_client(
    base_url: str | None, api_key: str | None, timeout_s: float, http_client: httpx.Client | None
) -> openai.OpenAI:
    """The SDK's client for one endpoint, without the SDK's own retries (``call_with_retries`` is ours)."""
    return openai.OpenAI(
        base_url=base_url,
        # Local servers need no key, but the SDK refuses to start without one.
        api_key=api_key or "unused",
        timeout=timeout_s,
        max_retries=0,  # retries are ours, so the policy is the same for every adapter
        http_client=http_client,  # type: ignore[arg-type]  # the SDK's stubs name its own httpx build
    )


class OpenAICompatibleChatModel:
    """Chat completions with JSON-schema-constrained output through the ``openai`` package."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        name: str | None = None,
        gate: CallGate | None = None,
    ) -> None:
        self.model = model
        self._gate = gate
        self.name = name or model
        # A client of our own can cut its calls in flight (``abort``); one passed in is left as it is.
        self._transport = AbortableTransport() if http_client is None else None
        self._aborted = False
        if self._transport is not None:
            http_client = httpx.Client(transport=self._transport, timeout=timeout_s, follow_redirects=True)
        self._client = openai_client(base_url, api_key, timeout_s, http_client)
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        self._sleep = sleep

    def complete(self, request: ChatRequest, *, timeout_s: float | None = None) -> ChatResult:
        """One chat completion; with a schema the reply is parsed and validated against it.

        ``timeout_s`` replaces the client's timeout for this call only.
        """
        schema = request.schema
        body = request_body(self.model, request)
        if timeout_s is not None:
            body["timeout"] = timeout_s
        began = time.perf_counter()
        response = call_with_retries(
            lambda: self._send(body),
            what="the chat endpoint",
            max_retries=self._max_retries,
            backoff_s=self._backoff_s,
            sleep=self._sleep,
            on_retry_after=self._gate.hold if self._gate is not None else None,
        )
        seconds = time.perf_counter() - began
        usage = usage_of(response)
        if self._gate is not None:
            self._gate.spent(usage.prompt_tokens + usage.completion_tokens)
        if not response.choices:
            raise ProviderError("the chat endpoint returned no choices")
        choice = response.choices[0]
        text = choice.message.content or ""
        data = None
        if schema is not None:
            try:
                data = parse_answer(text, schema)
            except ProviderError:
                # A grammar-constrained answer that stops at max_tokens may still be complete.
                if choice.finish_reason == "length":
                    raise TruncatedOutputError("the model's answer was cut off at max_tokens", partial=text) from None
                raise
        return ChatResult(
            text=text,
            model=response.model or self.model,
            usage=usage,
            data=data,
            seconds=seconds,
            speed=_speed(response),
        )

    def _send(self, request: dict[str, Any]) -> Any:
        if self._aborted:  # not an SDK error, so no retry sends it again
            raise ProviderError("the chat model was stopped")
        if self._gate is not None:  # every attempt, retries too, waits for its turn
            self._gate.wait_turn()
        return self._client.chat.completions.create(**request)

    def abort(self) -> None:
        """From another thread: cut the calls in flight and refuse later ones, as the model is closing.
        Each call fails with a ``ProviderError`` at once."""
        self._aborted = True
        if self._transport is not None:
            self._transport.abort()

    def close(self) -> None:
        self._client.close()


def usage_of(response: Any) -> Usage:
    """The token counts of a chat completion (the SDK's object), cached prompt tokens included."""
    usage = response.usage
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Usage(
        prompt_tokens=usage.prompt_tokens or 0,
        cached_tokens=cached,
        completion_tokens=usage.completion_tokens or 0,
    )


def _speed(response: Any) -> Speed | None:
    """The speed llama.cpp's server reports beside the usage (``timings``); other endpoints report none."""
    timings = getattr(response, "timings", None)
    if not isinstance(timings, dict):
        return None
    prompt, completion = timings.get("prompt_per_second"), timings.get("predicted_per_second")
    # A call served wholly from the prefix cache reads no prompt token and reports no prompt speed.
    if not isinstance(prompt, int | float) or not isinstance(completion, int | float) or prompt <= 0 or completion <= 0:
        return None
    return Speed(float(prompt), float(completion))


def parse_answer(text: str, schema: dict[str, Any]) -> Any:
    """The model's structured answer, checked against the schema it was asked for."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProviderError("the model's answer is not JSON", hint="use a model that supports json_schema") from exc
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        raise ProviderError(
            "the model's answer does not match the requested schema", hint=f"at {list(exc.absolute_path)}"
        ) from exc
    return data


class OpenAICompatibleEmbedder:
    """Embeddings from an OpenAI-compatible endpoint, returned as unit vectors."""

    def __init__(
        self,
        *,
        model: str,
        dimension: int,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = model
        self.dimension = dimension
        self._client = openai_client(base_url, api_key, timeout_s, http_client)
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        self._sleep = sleep

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts``, one row each, L2-normalized."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        response = call_with_retries(
            lambda: self._client.embeddings.create(model=self.name, input=list(texts)),
            what="the embeddings endpoint",
            max_retries=self._max_retries,
            backoff_s=self._backoff_s,
            sleep=self._sleep,
        )
        rows = sorted(response.data, key=lambda item: item.index)
        vectors = np.asarray([row.embedding for row in rows], dtype=np.float32)
        if vectors.shape != (len(texts), self.dimension):
            raise ProviderError(
                f"the embeddings endpoint returned vectors of shape {vectors.shape}",
                hint=f"AGENTBANK_EMBEDDING_DIMENSION is {self.dimension}",
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def close(self) -> None:
        self._client.close()
