"""The answer cache: identical requests are answered from stored answers, never from the model again."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.db.models import AnswerRecord


def cache_key(
    *,
    agent_id: str,
    agent_version: int,
    target: dict[str, Any],
    condition: str,
    condition_params: dict[str, Any],
    model: str,
    prompt_version: str,
    sampling: dict[str, Any],
    seed: int | None,
) -> str:
    """sha256 over every part that can change an answer; ``target`` names the item or question."""
    parts = {
        "agent": [agent_id, agent_version],
        "target": target,
        "condition": [condition, condition_params],
        "model": model,
        "prompt_version": prompt_version,
        "sampling": sampling,
        "seed": seed,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def cached_answers(session: Session, keys: list[str]) -> dict[str, AnswerRecord]:
    """Stored answers for these cache keys."""
    if not keys:
        return {}
    rows = session.scalars(select(AnswerRecord).where(AnswerRecord.cache_key.in_(keys)))
    return {row.cache_key: row for row in rows}
