"""The one reader of stored answers: sealed payloads opened with their participant's key, in batches.

Every answer is stored sealed under its participant's data key (``AnswerRecord.payload_encrypted``).
The answering engine (cache hits), a team's job results, the output check's record of what a team has
received, and the reviewers' queue all read answers through here, so the payload's shape and the
provenance a reader sees are defined once, and a batch of answers costs one query.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.db.models import Agent, AnswerRecord, Participant
from agentbank.keys.crypto import Cipher, DataKeyDestroyedError, KeyRing


@dataclass(frozen=True)
class StoredAnswer:
    """An answer as stored: what the agent said and what produced it."""

    record_id: int
    agent_id: uuid.UUID
    value: Any
    reason: str
    cited_turns: tuple[int, ...]
    record: AnswerRecord

    def provenance(self) -> dict[str, Any]:
        """What a team sees about how the answer was made (never the prompt or the memories)."""
        record = self.record
        return {
            "model": record.model,
            "prompt_version": record.prompt_version,
            "agent_version": record.agent_version,
            "item_version": record.item_version,
            "condition": record.condition,
            "seed": record.seed,
            "created_at": record.created_at.astimezone(UTC).isoformat(),
        }

    def for_team(self) -> dict[str, Any]:
        """The answer in a job's results."""
        return {
            "value": self.value,
            "reason": self.reason,
            "cited_turns": list(self.cited_turns),
            "provenance": self.provenance(),
        }

    def for_reviewer(self) -> dict[str, Any]:
        """The answer as a reviewer reads it in the queue of withheld answers."""
        return {"value": self.value, "reason": self.reason, "cited_turns": list(self.cited_turns)}


def open_answer(record: AnswerRecord, cipher: Cipher) -> StoredAnswer:
    """One record opened with its participant's cipher."""
    payload = json.loads(cipher.open(record.payload_encrypted))
    return StoredAnswer(
        record_id=record.id,
        agent_id=record.agent_id,
        value=payload["value"],
        reason=payload["reason"],
        cited_turns=tuple(payload["cited_turns"]),
        record=record,
    )


def read_answers(session: Session, keys: KeyRing, record_ids: Iterable[int]) -> dict[int, StoredAnswer]:
    """The answers with these ids, by id, in one query.

    An id that is absent from the result has no readable answer: its participant withdrew (the record
    was deleted, or the data key destroyed), and nobody can read it any more.
    """
    ids = set(record_ids)
    if not ids:
        return {}
    rows = session.execute(
        select(AnswerRecord, Participant.id, Participant.wrapped_key)
        .join(Agent, Agent.id == AnswerRecord.agent_id)
        .join(Participant, Participant.id == Agent.participant_id)
        .where(AnswerRecord.id.in_(ids))
    ).all()
    ciphers: dict[uuid.UUID, Cipher | None] = {}
    answers: dict[int, StoredAnswer] = {}
    for record, participant_id, wrapped_key in rows:
        if participant_id not in ciphers:
            try:
                ciphers[participant_id] = keys.cipher(participant_id, wrapped_key)
            except DataKeyDestroyedError:
                ciphers[participant_id] = None
        cipher = ciphers[participant_id]
        if cipher is not None:
            answers[record.id] = open_answer(record, cipher)
    return answers


def read_with(session: Session, cipher: Cipher, record_ids: Iterable[int]) -> list[StoredAnswer]:
    """The answers with these ids, in the order given, all of one participant whose ``cipher`` the caller
    holds; ids with no record left are skipped."""
    ids = list(dict.fromkeys(record_ids))
    if not ids:
        return []
    records = {r.id: r for r in session.scalars(select(AnswerRecord).where(AnswerRecord.id.in_(ids)))}
    return [open_answer(records[i], cipher) for i in ids if i in records]
