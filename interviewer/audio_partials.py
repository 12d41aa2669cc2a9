"""Transcribing ahead: spans of a spoken answer transcribed where the speaker pauses, while they speak;
and at each pause, the words so far judged (``turn_end``) and, when they end a finished thought, the
interviewer's decision started (``speculation``).

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
from interviewer.interviews import Services, current_question
from interviewer.speculation import SpeculativeChat
from interviewer.turn_end import Listener, Thought, judge

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
    cipher: Cipher,
    turn: int,
    digests: list[str],
    audio: np.ndarray,
    listener: Listener,
) -> None:
    """Transcribe and store the next span of the turn, if one long enough ends in a pause.

    Never fails the chunk: a span whose transcription fails is left for the end of the turn.
    """
    transcriber = services.transcriber
    if transcriber is None:
        return
    ahead = usable(session, interview, turn, digests, transcriber.name, cipher)
    detector = listener.detector
    cut = vad.cut_point(detector.speech, detector.frame, ahead.until, len(audio))
    if cut is None:
        return
    span = _store_span(session, services, interview, turn, digests, audio, ahead.until, cut, cipher)
    if span is not None:
        warm_decision(session, services, interview, " ".join([*ahead.texts, span]), cipher)


def warm_decision(
    session: Session, services: Services, interview: InterviewSession, spoken: str, cipher: Cipher | None = None
) -> None:
    """Send the decision's prompt up to ``spoken`` (what the person has said so far; nothing yet, before
    they speak) to the model's cache (``SpeculativeChat.warm``); a model without a cache is left alone.
    ``cipher``: the participant's, if the request has unwrapped it already."""
    chat = services.chat
    if not isinstance(chat, SpeculativeChat):
        return
    pending = replies.preview(session, services, interview, spoken, 0.0, cipher)
    if pending is None:
        return
    messages = Interviewer(pending.script, chat).answer_so_far(pending.position, pending.exchanges, pending.answer)
    if messages is not None:
        chat.warm(messages)


def at_pause(
    session: Session,
    services: Services,
    interview: InterviewSession,
    cipher: Cipher,
    turn: int,
    digests: list[str],
    audio: np.ndarray,
    listener: Listener,
) -> None:
    """At a pause (``TurnTaking.pause_s``): transcribe what the person said since the last span and let
    ``listener`` judge whether it ends a finished thought. A finished one is kept as a span (it is what the
    end of the turn will store if no word follows) and the interviewer's decision on it starts in the
    background (``speculation``); an unfinished one is not kept, so the next pause hears it again with
    what follows, in one piece."""
    transcriber = services.transcriber
    if transcriber is None:
        listener.heard(Thought.UNKNOWN)
        return
    ahead = usable(session, interview, turn, digests, transcriber.name, cipher)
    if ahead.until >= len(audio):
        listener.heard(judge(" ".join(ahead.texts)))
        return
    try:
        rest = listener.hear(transcriber, audio, ahead.until, ahead.texts, context=current_question(interview))
    except AgentBankError as exc:
        logger.warning("transcribing at a pause failed (%s); the turn waits as for an unfinished thought", exc)
        listener.heard(Thought.UNKNOWN)
        return
    if listener.thought is not Thought.FINISHED:
        return
    _keep_span(session, interview, turn, digests, ahead.until, len(audio), rest, transcriber.name, cipher)
    text = " ".join(piece.strip() for piece in [*ahead.texts, rest] if piece.strip())
    chat, speech_end = services.chat, listener.speech_end_s
    # The answer as the end of the turn will store it if no word follows (``audio_turns.hear``): the spans
    # joined, and its length up to the last word.
    pending = replies.preview(session, services, interview, " ".join(text.split()), speech_end or 0.0, cipher)
    if isinstance(chat, SpeculativeChat) and pending is not None:
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
    _keep_span(session, interview, turn, digests, start, end, span.text.strip(), transcriber.name, cipher)
    return span.text.strip()


def _keep_span(
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
