"""A provider's Batch API (OpenAI's files and batches, which other endpoints copy): send many chat
requests at once, at about half the price, and read their answers within the completion window."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import httpx
from openai.types.chat import ChatCompletion

from agentbank.core.errors import ProviderError
from agentbank.providers.chat import ChatRequest, ChatResult
from agentbank.providers.chat_requests import request_body, request_id
from agentbank.providers.openai_compat import call_with_retries, openai_client, parse_answer, usage_of

CHAT_ENDPOINT: Literal["/v1/chat/completions"] = "/v1/chat/completions"
T = TypeVar("T")
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass(frozen=True)
class BatchState:
    """Where a batch stands at the provider."""

    status: str  # validating | in_progress | finalizing | completed | failed | expired | cancelling | cancelled
    output_file_id: str | None
    error_file_id: str | None

    @property
    def ended(self) -> bool:
        """Whether the provider will do nothing more with it."""
        return self.status in ENDED


class BatchClient:
    """The files and batches endpoints of one OpenAI-compatible provider, with the bank's retry policy."""

    def __init__(
        self, *, base_url: str | None, api_key: str | None, timeout_s: float = 120.0, max_retries: int = 3,
        http_client: httpx.Client | None = None,
    ) -> None:  # fmt: skip
        self._client = openai_client(base_url, api_key, timeout_s, http_client)
        self._max_retries = max_retries

    def _call(self, call: Callable[[], T]) -> T:
        return call_with_retries(call, what="the batch endpoint", max_retries=self._max_retries, backoff_s=0.5)

    def submit(self, lines: Sequence[dict[str, Any]]) -> tuple[str, str]:
        """Upload the requests (JSON lines) and start a batch; (input file id, batch id)."""
        content = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode()
        uploaded = self._call(lambda: self._client.files.create(file=("requests.jsonl", content), purpose="batch"))
        batch = self._call(
            lambda: self._client.batches.create(
                input_file_id=uploaded.id, endpoint=CHAT_ENDPOINT, completion_window="24h"
            )
        )
        return uploaded.id, batch.id

    def state(self, batch_id: str) -> BatchState:
        """The batch's status and, once it ended, its files."""
        batch = self._call(lambda: self._client.batches.retrieve(batch_id))
        return BatchState(batch.status, batch.output_file_id, batch.error_file_id)

    def results(self, file_id: str) -> dict[str, dict[str, Any]]:
        """The answered requests of an output file: each chat completion by its request's id."""
        text = self._call(lambda: self._client.files.content(file_id).text)
        answered = {}
        for raw in text.splitlines():
            if not raw.strip():
                continue
            line = json.loads(raw)
            response = line.get("response") or {}
            if response.get("status_code") == 200 and isinstance(response.get("body"), dict):
                answered[line["custom_id"]] = response["body"]
        return answered

    def close(self) -> None:
        self._client.close()


def batch_line(body: dict[str, Any]) -> dict[str, Any]:
    """One request of a batch's input file, named by its content."""
    return {"custom_id": request_id(body), "method": "POST", "url": CHAT_ENDPOINT, "body": body}


class BatchAnswers:
    """A chat model that answers from a finished batch: the same request gets the answer the provider
    gave it in the batch; a request the batch did not answer fails as a provider error would."""

    def __init__(self, model: str, answered: dict[str, dict[str, Any]]) -> None:
        self.name = model
        self._answered = answered

    def complete(self, request: ChatRequest) -> ChatResult:
        """The batch's answer to this request."""
        body = request_body(self.name, request)
        answered = self._answered.get(request_id(body))
        if answered is None:
            raise ProviderError("the batch holds no answer to this request", retryable=False)
        completion = ChatCompletion.model_validate(answered)
        text = (completion.choices[0].message.content if completion.choices else None) or ""
        return ChatResult(
            text=text,
            model=completion.model or self.name,
            usage=usage_of(completion),
            data=parse_answer(text, request.schema) if request.schema is not None else None,
            seconds=0.0,
        )

    def close(self) -> None:
        """Nothing to close."""
