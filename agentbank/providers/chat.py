"""The chat-model interface every adapter implements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable


class Message(TypedDict):
    """One chat message, in the OpenAI shape every adapter accepts."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class Usage:
    """Token counts of one call; cached tokens are prompt tokens served from a prefix cache."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0

    @property
    def evaluated_prompt_tokens(self) -> int:
        """Prompt tokens the model actually had to evaluate (the cost a prefix cache saves)."""
        return self.prompt_tokens - self.cached_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.cached_tokens + other.cached_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True)
class Speed:
    """How fast a model read the prompt and wrote its answer, in tokens per second."""

    prompt_tps: float
    completion_tps: float

    def seconds_for(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Time to read ``prompt_tokens`` and write ``completion_tokens`` at this speed."""
        return prompt_tokens / self.prompt_tps + completion_tokens / self.completion_tps


@dataclass(frozen=True)
class ChatResult:
    """What a model said: the raw text, the parsed JSON when a schema was given, and the usage."""

    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    data: Any = None
    seconds: float = 0.0
    # Measured by the server (llama.cpp reports it); None where the endpoint does not say.
    speed: Speed | None = None


@dataclass(frozen=True)
class ChatRequest:
    """One call to a chat model: the messages, and how to answer them. With ``schema``, the answer is JSON
    valid against it."""

    messages: Sequence[Message]
    schema: dict[str, Any] | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = None
    frequency_penalty: float = 0.0


@runtime_checkable
class ChatModel(Protocol):
    """A chat model. With ``request.schema``, the answer is JSON valid against it (or a ProviderError)."""

    name: str

    def complete(self, request: ChatRequest) -> ChatResult: ...

    def close(self) -> None: ...


class CallGate(Protocol):
    """Decides when a call to a remote endpoint may start: a limit every process of the bank shares."""

    def wait_turn(self) -> float:
        """Block until this call may start; the seconds waited."""
        ...

    def spent(self, tokens: int) -> None:
        """Count a finished call's tokens."""
        ...

    def hold(self, seconds: float) -> None:
        """Nobody calls for ``seconds`` (the endpoint answered 429 with ``Retry-After``)."""
        ...
