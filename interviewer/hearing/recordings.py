"""Spoken answers: chunks uploaded as they are recorded, heard as they come, then joined and transcribed (the
turn's owner, ``turns.InterviewTurn``, receives each chunk, stores the text as the answer and replies to it).

A chunk is acknowledged only once the transaction that stores it commits, so an acknowledged chunk
survives a crash; the same chunk sent again is harmless, different bytes under its number are not.

Transcription keeps pace with the speaker: when a chunk arrives and at least ``PARTIAL_MIN_S`` of
audio not yet transcribed ends in a pause, that span is transcribed beside the requests (``listening``)
and its text stored (sealed) as an ``AudioPartial`` by the chunk's request that finds it done. At the
end of the turn only the audio after the last partial is left to transcribe. Partials are a head start,
never the record: one that does not match the chunks (other audio, another model) is ignored, and the
turn's audio is transcribed from where the usable ones stop, so a crash or a restart at any point gives
the same text.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from sqlalchemy import CursorResult, delete, select
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import AgentBankError, ConflictError, InvalidRequestError
from agentbank.db.models import AudioChunk, InterviewSession, Participant
from agentbank.db.models.interviews import AUDIO_DIGEST, AudioPartial
from agentbank.keys.crypto import Cipher
from interviewer.hearing import listening, partials, vad
from interviewer.hearing.calls import Calls
from interviewer.hearing.frames import ChunkStreams
from interviewer.hearing.listening import HearingServices
from interviewer.hearing.transcription import SAMPLE_RATE, BadAudioError, decode_audio
from interviewer.hearing.turn_end import TurnHeard, TurnTaking
from interviewer.session.interviews import actor_of, require_recording
from interviewer.session.script import Question

MAX_SEQ = 100_000
# What a recording's first bytes must look like: RIFF/WAVE, Matroska/WebM (EBML) or Ogg.
_CONTAINERS = (b"RIFF", b"\x1a\x45\xdf\xa3", b"OggS")
MAX_TURN_SECONDS = 1800.0
# Transcribe ahead once this much audio not yet transcribed ends in a pause (see ``vad.cut_point``).
PARTIAL_MIN_S = vad.PARTIAL_MIN_S
# A recording of at least this length with fewer words a second than this is flagged as poor audio
# (speech runs at two to three words a second).
POOR_MIN_S = 5.0
POOR_WORDS_PER_S = 0.4

logger = logging.getLogger(__name__)


class NoSpeechError(AgentBankError):
    """The recording holds no words that could be made out."""

    code = "no_speech"
    status_code = 422


class RecordingReplacedError(ConflictError):
    """The chunk belongs to a recording of the turn that a newer recording has replaced."""

    code = "recording_replaced"


def _check_take(interview: InterviewSession, take: int | None) -> None:
    # A client that names no take (older clients, scripts) writes to the current one.
    if take is not None and take != interview.audio_take:
        raise RecordingReplacedError(f"recording {take} of this answer was replaced by a newer recording")


@dataclass(frozen=True)
class ChunkAck:
    """A stored chunk: its place and digest; ``duplicate`` when it had been stored before."""

    turn: int
    seq: int
    sha256: str
    duplicate: bool


@dataclass(frozen=True)
class ReceivedChunk:
    """A chunk stored and heard: its acknowledgement, whether the person's turn has ended with it, and whether
    the interviewer makes a sound of listening now (a likely end that has not yet passed the turn)."""

    ack: ChunkAck
    end_of_turn: bool
    backchannel: bool = False


def receive(
    session: Session, services: HearingServices, interview: InterviewSession, cipher: Cipher, turn: int, seq: int,
    data: bytes, *, take: int | None, max_bytes: int, taking: TurnTaking, question: Question | None,
) -> ReceivedChunk:  # fmt: skip
    """Store a chunk (``store_chunk``) and hear it (``end_of_turn``), as its request does."""
    ack = store_chunk(session, interview, cipher, turn, seq, data, max_bytes=max_bytes, take=take)
    heard = end_of_turn(session, services, interview, cipher, turn, taking=taking, question=question)
    return ReceivedChunk(ack, heard.ended, heard.backchannel)


def store_chunk(session: Session, interview: InterviewSession, cipher: Cipher, turn: int, seq: int, data: bytes, *,
                max_bytes: int, take: int | None = None) -> ChunkAck:  # fmt: skip
    """Store one chunk of recording ``take`` of the answer for transcript position ``turn``, sealed with the
    participant's ``cipher`` (unwrapped once for the request by its owner, ``turns.InterviewTurn``)."""
    _check_take(interview, take)
    if not 0 <= seq <= MAX_SEQ:
        raise InvalidRequestError(f"the chunk number must be between 0 and {MAX_SEQ}")
    if not data:
        raise BadAudioError("the audio chunk is empty")
    if len(data) > max_bytes:
        raise InvalidRequestError(f"an audio chunk may hold at most {max_bytes} bytes")
    if seq == 0 and not data.startswith(_CONTAINERS):
        raise BadAudioError("the recording is not audio", hint="send WAV, or WebM/Ogg with Opus as browsers record it")
    require_recording(session, interview, turn)
    digest = hashlib.sha256(data).hexdigest()  # the sender's receipt: they hold the audio already
    # What is stored is keyed under the participant's data key, so a backup cannot confirm a guessed recording,
    # and the digest means nothing once their key is destroyed.
    kept = stored_digest(cipher, digest)
    existing = session.scalars(
        select(AudioChunk).where(AudioChunk.session_id == interview.id, AudioChunk.turn == turn, AudioChunk.seq == seq)
    ).first()
    if existing is not None:
        if existing.sha256 != kept:
            raise ConflictError(f"chunk {seq} of turn {turn} was already received with different audio")
        return ChunkAck(turn, seq, digest, duplicate=True)
    sealed, size = cipher.seal_bytes(data), len(data)
    session.add(AudioChunk(session_id=interview.id, turn=turn, seq=seq, data_encrypted=sealed, sha256=kept, bytes=size))
    session.flush()
    return ChunkAck(turn, seq, digest, duplicate=False)


def stored_digest(cipher: Cipher, sha256: str) -> str:
    """How a chunk's digest is kept: keyed under its participant's data key."""
    return cipher.digest(AUDIO_DIGEST, sha256)


def _turn_chunks(session: Session, interview: InterviewSession, turn: int) -> list[AudioChunk]:
    """The turn's chunks in order; ConflictError when one is missing."""
    rows = session.scalars(
        select(AudioChunk)
        .where(AudioChunk.session_id == interview.id, AudioChunk.turn == turn)
        .order_by(AudioChunk.seq)
    ).all()
    _require_all([row.seq for row in rows], turn)
    return list(rows)


def _turn_digests(session: Session, interview: InterviewSession, turn: int) -> list[str]:
    """The digests of the turn's chunks in order, without loading their audio; as ``_turn_chunks`` fails."""
    heads = session.execute(
        select(AudioChunk.seq, AudioChunk.sha256)
        .where(AudioChunk.session_id == interview.id, AudioChunk.turn == turn)
        .order_by(AudioChunk.seq)
    ).all()
    _require_all([head.seq for head in heads], turn)
    return [head.sha256 for head in heads]


def _require_all(seqs: list[int], turn: int) -> None:
    """InvalidRequestError when no chunk came, ConflictError when one is missing (the numbers in order)."""
    if not seqs:
        raise InvalidRequestError(f"no audio was received for turn {turn}")
    if seqs[-1] + 1 != len(seqs):
        missing = sorted(set(range(seqs[-1] + 1)) - set(seqs))
        raise ConflictError(f"chunk {missing[0]} of turn {turn} is missing; send it again")


def _decoded(rows: list[AudioChunk], cipher: Cipher) -> np.ndarray:
    return decode_audio(b"".join(cipher.open_bytes(row.data_encrypted) for row in rows), max_seconds=MAX_TURN_SECONDS)


def end_of_turn(
    session: Session, services: HearingServices, interview: InterviewSession, cipher: Cipher, turn: int, *,
    taking: TurnTaking, question: Question | None,
) -> TurnHeard:  # fmt: skip
    """Whether the audio received so far ends with the participant having finished their turn, or with a likely
    end that the interviewer answers with a sound of listening (``turn_end.Listener.backchannel``).

    Only chunks this process has not decoded yet are read and decoded (the recording's decoder and
    listener are kept between chunks), so a chunk costs what it holds, not the whole turn so far. At
    each pause of ``taking.pause_s`` the voice is heard (``turn_end``): when it sounds finished the turn
    ends after ``taking.sure_s``; otherwise the words said so far are transcribed and judged: the turn ends
    after a short silence when they end a finished thought, a long one otherwise, and a finished thought
    starts the interviewer's decision ahead. While the participant is still speaking, the audio is
    transcribed ahead where they pause. After a question that leaves time for a story, a finished thought
    or a sure voice waits longer (``TurnTaking.for_question``). The models run beside the request
    (``listening``), which waits for Whisper no longer than a frame. ``question``: the scripted question
    under discussion, as the turn's owner has it loaded.
    """
    key = (interview.id, turn, interview.audio_take)
    try:
        digests = _turn_digests(session, interview, turn)
    except (ConflictError, InvalidRequestError):
        return TurnHeard(False)  # a chunk still on its way: that is not the end of the turn
    recording = services.streams.recording(key, digests, max_seconds=MAX_TURN_SECONDS)
    heard_for = (taking, None if question is None else question.seconds)
    if recording.listener is None or recording.heard_for != heard_for:  # a listener per question's patience
        recording.listener, recording.calls = taking.for_question(heard_for[1]).listener(), Calls()
        recording.heard_for = heard_for
    listener = recording.listener
    new, fed = list(range(len(recording.digests), len(digests))), 0
    if new:
        stored = dict(
            session.execute(
                select(AudioChunk.seq, AudioChunk.data_encrypted).where(
                    AudioChunk.session_id == interview.id, AudioChunk.turn == turn, AudioChunk.seq.in_(new)
                )
            ).all()  # a list: dict() would take a Result, which has keys(), for a mapping
        )
        try:
            for seq in new:
                samples = recording.feed(digests[seq], cipher.open_bytes(stored[seq]))
                listener.feed(samples)
                fed += len(samples)
        except BadAudioError:
            services.streams.forget(key)
            return TurnHeard(False)  # undecodable so far; the end of the turn will say so if it stays that way
    hearing = listening.Hearing(session, services, interview, cipher, turn, digests, recording, listener,
                                None if question is None else question.text)  # fmt: skip
    listening.listen(hearing, within_s=fed / SAMPLE_RATE)
    return listener.verdict()  # at its end the turn then transcribes what is left, at once


@dataclass(frozen=True)
class Heard:
    """A spoken answer, transcribed: its text, and what it was made of."""

    text: str
    seconds: float  # how long the answer took: to its last word (the silence that ended it is the wait)
    recording_s: float
    chunks: int
    ahead: int  # spans transcribed while it was spoken
    poor: bool  # see ``poor_audio``: worked out here, so the turn asks nothing more of this module


def poor_audio(text: str, recording_s: float) -> bool:
    """Little speech in a long recording: a microphone too far, noise, or words Whisper made up."""
    return recording_s >= POOR_MIN_S and len(text.split()) / recording_s < POOR_WORDS_PER_S


def hear(
    session: Session,
    services: HearingServices,
    interview: InterviewSession,
    cipher: Cipher,
    turn: int,
    *,
    take: int | None = None,
    context: str | None = None,
) -> Heard:
    """Transcribe what is left of recording ``take`` of the answer for ``turn`` (``context``: the question
    asked) and drop its partials: its text is the answer's now, stored by the turn (``turns``).

    Bad or silent audio raises (BadAudioError, NoSpeechError) and changes nothing: the participant
    can discard the recording and answer again.
    """
    _check_take(interview, take)
    if services.transcriber is None:
        raise InvalidRequestError("spoken answers are not available here; type the answer instead")
    rows = _turn_chunks(session, interview, turn)
    audio = _decoded(rows, cipher)
    digests = [row.sha256 for row in rows]
    # What this process heard of the recording while it was spoken, taken out of its streams: the turn ends.
    recording = services.streams.finish((interview.id, turn, interview.audio_take), digests)
    listener = recording.listener if recording is not None else None
    speech_end = listener.tally.speech_end_s if listener is not None else None
    # A span still being heard is kept when it comes, not heard twice.
    if recording is not None and listener is not None and recording.calls.whisper is not None:
        listening.settle(listening.Hearing(session, services, interview, cipher, turn, digests, recording, listener,
                                           context))  # fmt: skip
    ahead = partials.usable(session, interview, turn, digests, services.transcriber.name, cipher)
    texts = list(ahead.texts)
    # What follows the spans is transcribed, unless this process heard it all and it is silence: Whisper
    # on silence may invent words, and a decision made ahead was made on the spans alone.
    silent_rest = speech_end is not None and ahead.until >= round(speech_end * SAMPLE_RATE)
    if ahead.until < len(audio) and not silent_rest:
        texts.append(services.transcriber.transcribe(audio[ahead.until :], context=context).text)
    text = " ".join(piece.strip() for piece in texts if piece.strip())
    if not text:
        raise NoSpeechError("no words could be heard in the recording", hint="check the microphone and answer again")
    seconds = len(audio) / SAMPLE_RATE
    _drop_partials(session, interview, turn)  # the turn's text is stored with the answer now
    return Heard(text, speech_end or seconds, seconds, len(rows), len(ahead.texts), poor_audio(text, seconds))


def _drop_partials(session: Session, interview: InterviewSession, turn: int) -> None:
    session.execute(delete(AudioPartial).where(AudioPartial.session_id == interview.id, AudioPartial.turn == turn))


def restart_turn(session: Session, streams: ChunkStreams, interview: InterviewSession, turn: int) -> int:
    """Begin a new recording of the answer for ``turn``: the old one's audio is dropped; the new take's number.

    Chunks still in flight from the old recording then fail with RecordingReplacedError instead of
    joining the new one, which is what spliced two recordings into one answer before.
    """
    require_recording(session, interview, turn)
    _drop_audio(session, streams, interview, turn)
    return interview.audio_take


def _drop_audio(session: Session, streams: ChunkStreams, interview: InterviewSession, turn: int) -> int:
    """Delete the turn's chunks and partials and move on to the next take; how many chunks went."""
    streams.forget((interview.id, turn, interview.audio_take))
    _drop_partials(session, interview, turn)
    result = session.execute(delete(AudioChunk).where(AudioChunk.session_id == interview.id, AudioChunk.turn == turn))
    interview.audio_take += 1
    session.flush()
    return cast(CursorResult[Any], result).rowcount or 0  # a DELETE's result is a cursor's


def discard_turn(session: Session, streams: ChunkStreams, interview: InterviewSession, turn: int) -> int:
    """Drop the chunks of an answer not yet transcribed, so it can be recorded again; how many went."""
    require_recording(session, interview, turn)
    dropped = _drop_audio(session, streams, interview, turn)
    participant = session.get_one(Participant, interview.participant_id)  # its name for the log; no key unwrapped
    audit.record(
        session, actor_of(participant), "interview.audio_discard", Tier.PARTICIPANT, participant_id=participant.id
    )
    return dropped
