"""An agent's answers in three steps, so that no model call runs inside a database transaction.

1. **Plan** (a short transaction that only reads): the cache keys of what is asked, the answers already
   stored, and for the rest the model calls to make, each with its prompt.
2. **Make** (no transaction): the calls, as many at once as the caller allows; each answer is stored in
   a transaction of its own as soon as its call returns, so a task that fails later resumes where it
   stopped and never pays for an answer twice.
3. **Release** (the caller's transaction): every answer read back from the cache; nothing is asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentbank.consultation.answering.calls import Call
from agentbank.core.errors import AgentBankError
from agentbank.instruments.model import Item
from agentbank.keys.crypto import Cipher
from agentbank.providers.chat import ChatRequest, Message, Usage


class NotPreparedError(AgentBankError):
    """A release found an answer that was never made: the plan's calls were not all made first."""

    code = "answers_not_prepared"
    status_code = 500


@dataclass(frozen=True)
class Output:
    """One answer a call produces and where it is stored."""

    key: str  # the answer's cache key
    call: Call  # what the stored answer records about its call
    item: Item | None = None  # a survey item; None for an open question
    item_id: int | None = None
    question_sha256: str | None = None


@dataclass(frozen=True)
class PendingCall:
    """A model call an agent's answers still need: the prompt, the call's options, what it yields."""

    messages: list[Message]
    schema: dict[str, Any]
    options: dict[str, Any]  # temperature, max_tokens, seed, frequency_penalty
    outputs: tuple[Output, ...]
    open_question: bool = False
    utterance: bool = False  # a focus group's: the words, then the stance (``answering.utterances``)

    @property
    def request(self) -> ChatRequest:
        """The call as the model takes it."""
        return ChatRequest(self.messages, self.schema, **self.options)


@dataclass(frozen=True)
class Made:
    """A call's answers as payloads to seal, one per output, with the call's tokens and time."""

    payloads: list[dict[str, Any]]
    usages: list[Usage]
    seconds: float


@dataclass
class Plan:
    """What one agent is asked: the cache key of each answer, in order, and the calls still to make."""

    agent_id: Any
    agent_version: int
    cipher: Cipher
    targets: list[tuple[str, str]]  # (the answer's name in the result, its cache key), in the asker's order
    calls: list[PendingCall]
    made: set[str] = field(default_factory=set)  # cache keys answered by the model for this plan

    @property
    def keys(self) -> list[str]:
        """Every answer's cache key, in order."""
        return [key for _, key in self.targets]
