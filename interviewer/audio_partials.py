"""Transcribing ahead: spans of a spoken answer transcribed where the speaker pauses, while they speak.

A partial is a head start, never the record: it names the exact chunks it was heard from (a digest
of their digests) and the transcriber, and one that does not match the stored chunks is ignored.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

import numpy as np
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agentbank.crypto import Cipher
from agentbank.errors import AgentBankError
from agentbank.models import InterviewSession
from agentbank.models.interviews import AudioPartial
from interviewer import vad
from interviewer.interviews import Services, cipher_of, current_question

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


def transcribe_ahead(
    session: Session,
    services: Services,
    interview: InterviewSession,
    turn: int,
    digests: list[str],
    audio: np.ndarray,
    detector: vad.FrameDetector,
) -> None:
    """Transcribe and store the next span of the turn, if one long enough ends in a pause.

    Never fails the chunk: a span whose transcription fails is left for the end of the turn.
    """
    transcriber = services.transcriber
    if transcriber is None:
        return
    _, cipher = cipher_of(session, services, interview)
    ahead = usable(session, interview, turn, digests, transcriber.name, cipher)
    cut = vad.cut_point(detector.speech, detector.frame, ahead.until, len(audio))
    if cut is None:
        return
    question = current_question(interview)
    try:
        span = transcriber.transcribe(audio[ahead.until : cut], context=question)
    except AgentBankError as exc:
        logger.warning("transcribing ahead failed (%s); the end of the turn will do it", exc)
        return
    partial = AudioPartial(
        session_id=interview.id,
        turn=turn,
        start_sample=ahead.until,
        end_sample=cut,
        chunks=len(digests),
        chunks_sha256=chunks_digest(digests),
        model=transcriber.name,
        text_encrypted=cipher.seal(span.text.strip()),
    )
    try:
        with session.begin_nested():
            session.add(partial)
    except IntegrityError:
        pass  # another request for this turn stored a span from the same place first
