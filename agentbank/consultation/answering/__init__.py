"""Answering as an agent. The rest of the bank sees its vocabulary (conditions, an agent's answer, why an
agent answers nothing); the engine, its plans and its calls are the door's alone (an import contract)."""

from agentbank.consultation.answering.answers import (
    MAX_TOKENS_OPEN,
    MAX_TOKENS_PER_ITEM,
    AgentAnswer,
    AgentUnavailableError,
)
from agentbank.consultation.answering.conditions import CONDITIONS, Condition

__all__ = ["CONDITIONS", "MAX_TOKENS_OPEN", "MAX_TOKENS_PER_ITEM", "AgentAnswer", "AgentUnavailableError", "Condition"]
