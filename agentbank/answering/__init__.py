"""Answering as an agent: conditions, schemas, the answer cache and the engine."""

from agentbank.answering.conditions import CONDITIONS, Condition
from agentbank.answering.engine import AgentAnswer, AnswerEngine

__all__ = ["CONDITIONS", "AgentAnswer", "AnswerEngine", "Condition"]
