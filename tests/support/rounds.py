"""The answering engine's three steps run in one test session: plan, make and store, release."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from agentbank.consultation.answering import AgentAnswer
from agentbank.consultation.answering.engine import AnswerEngine
from agentbank.consultation.answering.plans import Plan


def answer_round(engine: AnswerEngine, session: Session, *args: Any, **options: Any) -> list[AgentAnswer]:
    """``plan_survey``'s answers, its calls made and stored in ``session``."""
    return _made(engine, session, engine.plan_survey(session, *args, **options))


def ask_round(engine: AnswerEngine, session: Session, *args: Any, **options: Any) -> AgentAnswer:
    """``plan_ask``'s answer, its call made and stored in ``session``."""
    (answer,) = _made(engine, session, engine.plan_ask(session, *args, **options))
    return answer


def _made(engine: AnswerEngine, session: Session, plan: Plan) -> list[AgentAnswer]:
    for call in plan.calls:
        engine.store(session, plan, call, engine.make(call))
    return engine.release(session, plan)
