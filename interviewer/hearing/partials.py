"""Partials: the spans of a spoken answer transcribed while it is spoken (``listening`` asks for them), kept
sealed and found again at the end of the turn (the decision's prompt is warmed up by ``deciding.replies.warm``).

A partial is a head start, never the record: it names the exact chunks it was heard from (a digest
of their digests) and the transcriber, and one that does not match the stored chunks is ignored.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agentbank.db.models import InterviewSession
from agentbank.db.models.interviews import AudioPartial
from agentbank.keys.crypto import Cipher

logger = logging.getLogger(__name__)


def chunks_digest(digests: list[str]) -> str:
    """Names the exact audio of these chunks: the digest of their digests, in order."""
    return hashlib.sha256("".join(digests).encode()).hexdigest()


@dataclass(frozen=True)
class Ahead:
    """What the usable partials say of the turn's start: their texts and the sample where they stop."""

    texts: list[str]
    until: int


def usable(
    session: Session, interview: InterviewSession, turn: int, digests: list[str], model: str, cipher: Cipher
) -> Ahead:
    """The chain of partials from sample 0 that match these chunks and this transcriber."""
    stored = session.scalars(
        select(AudioPartial)
        .where(AudioPartial.session_id == interview.id, AudioPartial.turn == turn)
        .order_by(AudioPartial.start_sample)
    ).all()
    texts: list[str] = []
    until = 0
    for partial in stored:
        if partial.start_sample != until or partial.model != model or partial.chunks > len(digests):
            break
        if partial.chunks_sha256 != chunks_digest(digests[: partial.chunks]):
            break
        texts.append(cipher.open(partial.text_encrypted))
        until = partial.end_sample
    return Ahead(texts, until)


def keep_span(
    session: Session, interview: InterviewSession, turn: int, digests: list[str], start: int, end: int,
    text: str, model: str, cipher: Cipher,
) -> None:  # fmt: skip
    """Store the text of ``audio[start:end]`` as a partial of these chunks (another request may have first)."""
    partial = AudioPartial(
        session_id=interview.id,
        turn=turn,
        start_sample=start,
        end_sample=end,
        chunks=len(digests),
        chunks_sha256=chunks_digest(digests),
        model=model,
        text_encrypted=cipher.seal(text),
    )
    try:
        with session.begin_nested():
            session.add(partial)
    except IntegrityError:
        pass  # another request for this turn stored a span from the same place first
