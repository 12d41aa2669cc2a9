"""What the rest of the bank may know of answering: an agent's answer, why an agent answers nothing, and the
room an answer takes. The engine that makes answers is the door's alone (``agentbank.consultation.door``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentbank.core.errors import AgentBankError
from agentbank.providers.chat import Usage

# Room for the longest valid answer (a 200-character reason and a code) even at three tokens a
# character, which non-ASCII text from a small model can cost; a model that stops early uses less.
MAX_TOKENS_PER_ITEM = 650
MAX_TOKENS_OPEN = 2800


class AgentUnavailableError(AgentBankError):
    """The agent is not active (superseded or withdrawn) and answers nothing."""

    code = "agent_unavailable"
    status_code = 409


@dataclass(frozen=True)
class AgentAnswer:
    """An agent's answer to one item or question, with everything needed to reproduce it."""

    agent_id: str
    target: str
    value: Any
    reason: str
    cited_turns: tuple[int, ...]
    cached: bool
    provenance: dict[str, Any]
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    record_id: int | None = None
