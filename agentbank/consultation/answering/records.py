"""The engine's answers as stored: sealed with the participant's key, keyed for the cache, with provenance."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from agentbank.consultation.answering.answers import AgentAnswer
from agentbank.consultation.answering.calls import Call
from agentbank.consultation.answering.stored import open_answer
from agentbank.core.prompts.files import prompt_version
from agentbank.db.models import AnswerRecord
from agentbank.instruments.model import Item
from agentbank.keys.crypto import Cipher
from agentbank.providers.chat import Usage


def store_answer(
    session: Session,
    model: str,
    agent_id: Any,
    agent_version: int,
    cipher: Cipher,
    key: str,
    call: Call,
    payload: dict[str, Any],
    usage: Usage,
    seconds: float,
    *,
    item: Item | None = None,
    item_id: int | None = None,
    question_sha256: str | None = None,
) -> None:
    """Seal and store one answer under its cache key, with everything that produced it. Storing a key
    that is already there changes nothing: two workers that made the same answer keep the first."""
    values = {
        "cache_key": key,
        "agent_id": agent_id,
        "agent_version": agent_version,
        "item_id": item_id,
        "item_version": item.version if item is not None else None,
        "question_sha256": question_sha256,
        "condition": call.condition.name,
        "condition_params": {**call.condition.recorded(cipher), **({"expert": call.expert} if call.expert else {})},
        "model": model,
        "prompt_version": prompt_version(),
        "sampling": call.sampling,
        "seed": call.seed,
        "payload_encrypted": cipher.seal(json.dumps(payload)),
        "prompt_tokens": usage.prompt_tokens,
        "cached_tokens": usage.cached_tokens,
        "completion_tokens": usage.completion_tokens,
        "seconds": seconds,
    }
    session.execute(insert(AnswerRecord).values(**values).on_conflict_do_nothing(index_elements=["cache_key"]))


def answer_of(record: AnswerRecord, cipher: Cipher, target: str, cached: bool = True) -> AgentAnswer:
    """A stored answer as the engine returns it, with its provenance."""
    stored = open_answer(record, cipher)
    return AgentAnswer(
        agent_id=str(record.agent_id),
        target=target,
        value=stored.value,
        reason=stored.reason,
        cited_turns=stored.cited_turns,
        cached=cached,
        provenance={
            "agent_version": record.agent_version,
            "item_version": record.item_version,
            "condition": record.condition,
            "condition_params": record.condition_params,
            "model": record.model,
            "prompt_version": record.prompt_version,
            "sampling": record.sampling,
            "seed": record.seed,
            "cache_key": record.cache_key,
        },
        usage=Usage(record.prompt_tokens, record.cached_tokens, record.completion_tokens),
        seconds=record.seconds,
        record_id=record.id,
    )
