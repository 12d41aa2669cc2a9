"""Transcribing ahead: spans of a spoken answer transcribed where the speaker pauses, while they speak;
and deciding ahead: at a pause that may end the answer, the rest transcribed and the interviewer's
decision started (``speculation``).

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

from agentbank.db.models import InterviewSession
from agentbank.db.models.interviews import AudioPartial
from agentbank.errors import AgentBankError
from agentbank.keys.crypto import Cipher
from interviewer import replies, vad
from interviewer.engine import Interviewer
from interviewer.interviews import Services, cipher_of, current_question
from interviewer.speculation import AHEAD_AFTER_S, SpeculativeChat

logger = logging.getLogger(__name__)

# The pause each recording's decision was last started at (in this process), so a pause starts one.
_DECIDED_AHEAD: dict[tuple[object, ...], float] = {}
MAX_AHEAD = 256


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
    span = _store_span(session, services, interview, turn, digests, audio, ahead.until, cut, cipher)
    if span is not None:
        warm_decision(session, services, interview, " ".join([*ahead.texts, span]))


def warm_decision(session: Session, services: Services, interview: InterviewSession, spoken: str) -> None:
    """Send the decision's prompt up to ``spoken`` (what the person has said so far; nothing yet, before
    they speak) to the model's cache (``SpeculativeChat.warm``); a model without a cache is left alone."""
    chat = services.chat
    if not isinstance(chat, SpeculativeChat):
        return
    pending = replies.preview(session, services, interview, spoken, 0.0)
    if pending is None:
        return
    messages = Interviewer(pending.script, chat).answer_so_far(pending.position, pending.exchanges, pending.answer)
    if messages is not None:
        chat.warm(messages)


def decide_ahead(
    session: Session,
    services: Services,
    interview: InterviewSession,
    turn: int,
    digests: list[str],
    audio: np.ndarray,
    detector: vad.FrameDetector,
) -> None:
    """Once the person has been silent for ``AHEAD_AFTER_S``: transcribe the rest of what they said and
    start the interviewer's decision on it in the background (``speculation``), once per pause."""
    chat, transcriber, speech_end = services.chat, services.transcriber, detector.speech_end_s
    if not isinstance(chat, SpeculativeChat) or transcriber is None or speech_end is None:
        return
    if not detector.speech_started or detector.trailing_silence_s < AHEAD_AFTER_S:
        return
    key = (interview.id, turn, interview.audio_take)
    if _DECIDED_AHEAD.get(key) == speech_end:
        return  # this pause's decision is already on its way
    _DECIDED_AHEAD[key] = speech_end
    while len(_DECIDED_AHEAD) > MAX_AHEAD:
        _DECIDED_AHEAD.pop(next(iter(_DECIDED_AHEAD)))
    _, cipher = cipher_of(session, services, interview)
    ahead = usable(session, interview, turn, digests, transcriber.name, cipher)
    if ahead.until < len(audio):
        _store_span(session, services, interview, turn, digests, audio, ahead.until, len(audio), cipher)
        ahead = usable(session, interview, turn, digests, transcriber.name, cipher)
    if ahead.until < len(audio):
        return  # the span could not be transcribed: the end of the turn will do it
    # The answer as the end of the turn will store it if no word follows (``audio_turns.hear``): the spans
    # joined, and its length up to the last word.
    text = " ".join(piece.strip() for piece in ahead.texts if piece.strip())
    pending = replies.preview(session, services, interview, text, speech_end) if text else None
    if pending is not None:
        chat.ahead(lambda model: replies.decide_with(model, pending))


def _store_span(
    session: Session, services: Services, interview: InterviewSession, turn: int, digests: list[str],
    audio: np.ndarray, start: int, end: int, cipher: Cipher,
) -> str | None:  # fmt: skip
    """Transcribe ``audio[start:end]`` and keep it as a partial of these chunks (never fails the chunk); the
    span's text, or None when it could not be transcribed."""
    transcriber = services.transcriber
    assert transcriber is not None
    try:
        span = transcriber.transcribe(audio[start:end], context=current_question(interview))
    except AgentBankError as exc:
        logger.warning("transcribing ahead failed (%s); the end of the turn will do it", exc)
        return None
    partial = AudioPartial(
        session_id=interview.id,
        turn=turn,
        start_sample=start,
        end_sample=end,
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
    return span.text.strip()
