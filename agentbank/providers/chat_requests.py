"""The body of an OpenAI-compatible chat completion request: one builder, so a call sent now and the
same call sent in a batch are the same request, byte for byte, and a batch's answers find their call."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from agentbank.providers.chat import Message


def request_body(
    model: str,
    messages: Sequence[Message],
    *,
    schema: dict[str, Any] | None = None,
    temperature: float = 0.0,
    max_tokens: int = 512,
    seed: int | None = None,
    frequency_penalty: float = 0.0,
) -> dict[str, Any]:
    """The request as the endpoint reads it; with ``schema`` the answer is constrained to it."""
    body: dict[str, Any] = {"model": model, "messages": list(messages), "temperature": temperature,
                            "max_tokens": max_tokens}  # fmt: skip
    if seed is not None:
        body["seed"] = seed
    if frequency_penalty:  # OpenAI's name, which vLLM and llama.cpp's server read too
        body["frequency_penalty"] = frequency_penalty
    if schema is not None:
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": "answer", "schema": schema, "strict": True}}  # fmt: skip
    return body


def request_id(body: dict[str, Any]) -> str:
    """A name of the request that depends only on its content (a batch line's ``custom_id``)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
