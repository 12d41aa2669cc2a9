"""The body of an OpenAI-compatible chat completion request: one builder, so a call sent now and the
same call sent in a batch are the same request, byte for byte, and a batch's answers find their call."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agentbank.providers.chat import ChatRequest


def request_body(model: str, request: ChatRequest) -> dict[str, Any]:
    """The request as the endpoint reads it; with a schema the answer is constrained to it."""
    body: dict[str, Any] = {"model": model, "messages": list(request.messages), "temperature": request.temperature,
                            "max_tokens": request.max_tokens}  # fmt: skip
    if request.seed is not None:
        body["seed"] = request.seed
    if request.frequency_penalty:  # OpenAI's name, which vLLM and llama.cpp's server read too
        body["frequency_penalty"] = request.frequency_penalty
    if request.schema is not None:
        answer = {"name": "answer", "schema": request.schema, "strict": True}
        body["response_format"] = {"type": "json_schema", "json_schema": answer}
    return body


def request_id(body: dict[str, Any]) -> str:
    """A name of the request that depends only on its content (a batch line's ``custom_id``)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
