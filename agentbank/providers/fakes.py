"""Deterministic stand-ins for unit tests: a scripted chat model and a hashing embedder.

They are never the thing a feature is called done on; real-model tests do that.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import numpy as np

from agentbank.core.errors import ProviderError
from agentbank.providers.chat import ChatRequest, ChatResult, Message, Usage
from agentbank.providers.tokens import WORDS, TokenCounter, shared_prefix

Reply = str | dict[str, Any] | list[Any] | Exception
Responder = Callable[[Sequence[Message], dict[str, Any] | None], Reply]


@dataclass
class ScriptedChatModel:
    """Answers from a script: a list of replies in order, or a function of the request.

    A reply that is an exception is raised. Usage counts whitespace tokens and, like a prefix cache,
    counts as cached the tokens shared with the previous prompt. ``calls`` keeps every request.
    """

    script: list[Reply] | Responder
    name: str = "scripted"
    calls: list[dict[str, Any]] = field(default_factory=list)
    counter: TokenCounter = WORDS  # how it counts tokens, so an estimate can count them the same way
    _previous: list[str] = field(default_factory=list, repr=False)

    def complete(self, request: ChatRequest) -> ChatResult:
        """The next scripted reply, validated against the request's schema like a real adapter."""
        messages, schema = request.messages, request.schema
        self.calls.append(
            {
                "messages": list(messages), "schema": schema, "temperature": request.temperature,
                "seed": request.seed, "max_tokens": request.max_tokens, "frequency_penalty": request.frequency_penalty,
            }
        )  # fmt: skip
        if callable(self.script):
            reply = self.script(messages, schema)
        elif self.script:
            reply = self.script.pop(0)
        else:
            raise ProviderError("the scripted model has no replies left")
        if isinstance(reply, Exception):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
        data = None
        if schema is not None:
            try:
                data = json.loads(text)
                jsonschema.validate(data, schema)
            except (json.JSONDecodeError, jsonschema.ValidationError) as exc:
                raise ProviderError("the model's answer does not match the requested schema") from exc
        tokens = self.counter.prompt(messages)
        cached = shared_prefix(tokens, self._previous)
        self._previous = tokens
        usage = Usage(prompt_tokens=len(tokens), cached_tokens=cached, completion_tokens=self.counter.count(text))
        return ChatResult(text=text, model=self.name, usage=usage, data=data)

    def close(self) -> None:
        pass


def minimal_answer(schema: dict[str, Any]) -> Any:
    """The simplest value valid against ``schema``: the first enum option, the minimum, and so on."""
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        return minimal_answer(schema["anyOf"][0])
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {key: minimal_answer(props[key]) for key in schema.get("required", [])}
    if kind == "array":
        if schema.get("uniqueItems") and "enum" in schema["items"]:  # distinct options: the first ones
            return schema["items"]["enum"][: schema.get("minItems", 0)]
        return [minimal_answer(schema["items"]) for _ in range(schema.get("minItems", 0))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return "x" * schema.get("minLength", 1)


def echo_minimal(_messages: Sequence[Message], schema: dict[str, Any] | None) -> Reply:
    """A responder for the ``fake`` provider: a minimal valid answer, or a fixed sentence."""
    return minimal_answer(schema) if schema is not None else "I have nothing to add."


STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "which",
        "who",
        "with",
        "would",
        "you",
        "your",
    ]
)


class HashingEmbedder:
    """Bag-of-words vectors from hashed content words: texts sharing words are close, and it never varies."""

    name = "hashing"

    def __init__(self, dimension: int = 384) -> None:
        self.dimension = dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts``, one row each, L2-normalized (a zero text gives a zero row)."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                if word in STOPWORDS:
                    continue
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self.dimension
                out[row, index] += 1.0 if digest[4] & 1 else -1.0
            norm = np.linalg.norm(out[row])
            if norm > 0:
                out[row] /= norm
        return out

    def close(self) -> None:
        pass
