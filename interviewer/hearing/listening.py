"""A spoken answer's model calls, run beside the requests that bring its chunks.

A chunk's request stores the chunk and hears it (``recordings.end_of_turn``) while it holds the interview's
row, and the frames behind it wait. A Whisper call takes about 0.75 s on two idle cores, and a pause's
words (one or two calls) took 8–10 s beside the chat model's notes on the answer before: in the browser, a
request that waited for them held up every frame behind it, and the person lived that silence (two of ten
turns ended 10 s after the last word). So the end-of-turn model and Whisper run on a small pool of threads,
and each chunk's request applies what has come back, in its own transaction: the partials it stores and the
decision it starts ahead. No Whisper call runs inside a transaction, and a turn whose words are late ends
as for an unfinished thought (``TurnTaking.unfinished_s``), not whenever they come.

A request waits for Whisper only on the words of the pause the person is in, and no longer than one of the
page's frames (``WORDS_WAIT_S``), so the server keeps pace with the speaker even when the page, behind,
sends its frames together; a client that sends whole seconds has slow words applied on its next chunk. The
end-of-turn model's call on the pause the person is in is waited for whole (``_voice_now``): it is short,
and its answer only counts while the pause lasts.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from sqlalchemy.orm import Session

from agentbank.core.errors import AgentBankError
from agentbank.db.models import InterviewSession
from agentbank.keys.crypto import Cipher
from interviewer.deciding import replies
from interviewer.deciding.replies import DecidingServices
from interviewer.deciding.speculation import SpeculativeChat
from interviewer.hearing import partials, vad
from interviewer.hearing.calls import Calls, SpanCall, VoiceCall, WordsCall
from interviewer.hearing.frames import ChunkStreams, Recording
from interviewer.hearing.ports import Transcriber
from interviewer.hearing.thoughts import Thought, judge
from interviewer.hearing.turn_end import Listener

logger = logging.getLogger(__name__)
# One call of each kind at a time: the end-of-turn model (a tenth of a second) never waits behind Whisper.
# The end of a turn waits this long at most for a call still running on its audio (a Whisper call).
SETTLE_S = 60.0
# A call that took longer than this is logged: the turn's end waited on it.
SLOW_CALL_S = 1.5
# The most a request waits for the end-of-turn model on the pause the person is in (``_voice_now``).
VOICE_WAIT_S = 2.0
# The most a request waits for the words of the pause the person is in: the page's frame. Not the chunk's
# audio: a page that fell behind sends its frames together, and a request that waited as long as they
# lasted made the next upload gather as much again, so that while Whisper was slow the page fell further
# behind with every upload (0.40, 0.61, 0.89, 1.02 s in Chromium on two shared cores, and the turn ended
# 3.9 s after the last word where it waits 3 s). A client that sends whole seconds has the words applied
# on its next chunk when they take longer.
WORDS_WAIT_S = 0.1


class HearingServices(DecidingServices, Protocol):
    """What hearing needs besides the database: deciding's services, a transcriber, the recordings being
    decoded in this process and the threads the models run on (both built once, by the application)."""

    @property
    def transcriber(self) -> Transcriber | None: ...

    @property
    def streams(self) -> ChunkStreams: ...

    @property
    def pool(self) -> Executor: ...


@dataclass(frozen=True)
class Hearing:
    """A chunk's request, as the calls need it: the interview, the turn's chunks and their recording."""

    session: Session
    services: HearingServices
    interview: InterviewSession
    cipher: Cipher
    turn: int
    digests: list[str]
    recording: Recording
    listener: Listener
    question: str | None  # the question asked, which guides Whisper's spelling

    @property
    def calls(self) -> Calls:
        return self.recording.calls


def listen(hearing: Hearing, *, within_s: float) -> None:
    """Apply the calls that have come back, ask for the ones the recording needs now (the voice at a pause,
    then its words; spans to transcribe ahead while the person speaks), and wait for the words of the pause
    the person is in at most ``within_s`` (the audio the chunk brought) or ``WORDS_WAIT_S``, whichever is
    less; the voice at the current pause is waited for whole, and nothing else at all."""
    calls, deadline, voice_waited = hearing.calls, time.monotonic() + min(within_s, WORDS_WAIT_S), False
    if hearing.listener.tally.speech_started and isinstance(hearing.services.chat, SpeculativeChat):
        hearing.services.chat.person_speaking()  # the notes on the last answer wait for the next reply
    while True:
        _collect(hearing, calls)
        _ask(hearing, calls)
        voice = _voice_now(hearing, calls)
        if voice is not None and not voice_waited:
            wait([voice], timeout=VOICE_WAIT_S)
            voice_waited = True
            continue
        waiting, left = _words_now(hearing, calls), deadline - time.monotonic()
        if not waiting or left <= 0:
            return
        wait(waiting, timeout=left, return_when=FIRST_COMPLETED)


def _words_now(hearing: Hearing, calls: Calls) -> list[Future[Any]]:
    """Whisper's call, if it hears the words of the pause the person is in now: only then does its answer
    change what this chunk says. A span heard ahead, or the words of a pause the person has spoken after,
    are kept when they come and not waited for (a request waited for them as long as its chunk's audio
    lasted, and in Chromium on two shared cores the uploads while the person spoke on took 0.28 s, 0.61,
    0.80, 1.10, 1.31, 1.60 s: see ``WORDS_WAIT_S``)."""
    words, listener = calls.whisper, hearing.listener
    if not isinstance(words, WordsCall) or words.future.done() or not listener.paused:
        return []
    return [words.future] if words.pause.at == listener.speech_end_s else []


def _voice_now(hearing: Hearing, calls: Calls) -> Future[float] | None:
    """The end-of-turn model's call, if it hears the pause the person is in now. Its answer is waited for, so
    that it is applied in the audio's own time: a pause of a second may be over by the time a late answer
    comes, and the turn then runs on into the next sentence (the browser test of a person who goes on after
    a one-second pause failed so once, inside the slow suite, when the answer was waited for only as long as
    the chunk's audio). It takes a tenth of a second or so; Whisper, most of a second to ten, is never waited
    for beyond a frame (``WORDS_WAIT_S``)."""
    voice, listener = calls.voice, hearing.listener
    if voice is None or voice.future.done() or not listener.paused or voice.at != listener.speech_end_s:
        return None
    return voice.future


def settle(hearing: Hearing) -> None:
    """At the end of the turn: wait for a Whisper call still running on its audio and keep its text as a
    span, finished thought or not (no pause follows), so that the end does not transcribe it again."""
    call, hearing.recording.calls = hearing.calls.whisper, Calls()
    if call is None:
        return
    running: Future[Any] = call.future
    wait([running], timeout=SETTLE_S)
    if not running.done():
        return
    # Kept only: the decision is made now, so nothing is warmed or started ahead.
    try:
        if isinstance(call, SpanCall):
            _keep(hearing, call.digests, call.start, call.end, call.future.result().text.strip())
        else:
            _keep(hearing, call.digests, call.pause.since, call.end, call.future.result()[0])
    except AgentBankError:
        return  # the end transcribes the rest itself


def _collect(hearing: Hearing, calls: Calls) -> None:
    voice = calls.voice
    if voice is not None and voice.future.done():
        calls.voice = None
        try:
            probability: float | None = voice.future.result()
        except AgentBankError as exc:
            logger.warning("the end-of-turn model failed (%s); the pause waits for its words", exc)
            probability = None
        hearing.listener.voiced(voice.at, probability)
    whisper = calls.whisper
    if whisper is not None and whisper.future.done():
        calls.whisper = None
        if time.monotonic() - whisper.asked > SLOW_CALL_S:
            logger.info("Whisper took %.1f s on a turn's audio", time.monotonic() - whisper.asked)
        if isinstance(whisper, WordsCall):
            _words_heard(hearing, whisper)
        else:
            _ahead_heard(hearing, whisper)


def _ask(hearing: Hearing, calls: Calls) -> None:
    listener, recording = hearing.listener, hearing.recording
    needs = listener.needs()
    if needs.voice and calls.voice is None and listener.model is not None:
        clip = listener.voice_clip(recording.audio)
        if clip is not None:
            calls.voice = VoiceCall(listener.speech_end_s, hearing.services.pool.submit(listener.model.probability,
                                                                                        clip))  # fmt: skip
    if calls.whisper is not None:
        return
    if needs.words:
        _ask_words(hearing, calls, recording.audio)
    elif not needs.paused:
        _ask_ahead(hearing, calls)


def _ask_words(hearing: Hearing, calls: Calls, audio: np.ndarray) -> None:
    """The words said since the last span, to judge the pause (``_words_heard`` keeps a finished one)."""
    listener, transcriber = hearing.listener, hearing.services.transcriber
    if transcriber is None:
        listener.heard(Thought.UNKNOWN)
        return
    ahead = _usable(hearing)
    if ahead.until >= len(audio):
        listener.heard(judge(" ".join(ahead.texts)))
        return
    pause = listener.pause(ahead.until, ahead.texts)
    future = hearing.services.pool.submit(pause.judge, transcriber, audio, context=hearing.question)
    calls.whisper = WordsCall(pause, len(audio), list(hearing.digests), future)


def _words_heard(hearing: Hearing, call: WordsCall) -> None:
    """A pause's words came back: judged; a finished thought is kept as a span (what the end of the turn
    stores if no word follows) and, if the person is still silent, the interviewer's decision on it starts
    ahead (``speculation``). An unfinished one is not kept: the next pause hears it again with what follows."""
    listener, services = hearing.listener, hearing.services
    try:
        rest, thought = call.future.result()
    except AgentBankError as exc:
        logger.warning("transcribing at a pause failed (%s); the turn waits as for an unfinished thought", exc)
        listener.heard(Thought.UNKNOWN, at=call.pause.at)
        return
    listener.heard(thought, at=call.pause.at)
    if thought is not Thought.FINISHED:
        return
    _keep(hearing, call.digests, call.pause.since, call.end, rest)
    if call.pause.at != listener.speech_end_s:
        return  # they spoke on: the decision waits for the pause that ends the turn
    text = " ".join(" ".join([*call.pause.kept, rest]).split())
    # The answer as the end of the turn will store it if no word follows (``recordings.hear``): the spans
    # joined, and its length up to the last word.
    pending = replies.preview(hearing.session, services, hearing.interview, text, call.pause.at or 0.0, hearing.cipher)
    if isinstance(services.chat, SpeculativeChat) and pending is not None:
        services.chat.ahead(lambda model: replies.decide_with(model, pending))


def _ask_ahead(hearing: Hearing, calls: Calls) -> None:
    """The next span long enough that ends in a pause, transcribed while the person speaks."""
    transcriber = hearing.services.transcriber
    if transcriber is None:
        return
    # The spans stored are read once, then again only after this process keeps one: not on every frame.
    ahead = calls.spans = calls.spans or _usable(hearing)
    detector = hearing.listener.detector
    cut = vad.cut_point(detector.speech, detector.frame, ahead.until, hearing.recording.length)
    if cut is None:
        return
    span = hearing.recording.audio[ahead.until : cut]
    future = hearing.services.pool.submit(transcriber.transcribe, span, context=hearing.question)
    calls.whisper = SpanCall(ahead.until, cut, list(hearing.digests), ahead.texts, future)


def _ahead_heard(hearing: Hearing, call: SpanCall) -> None:
    """A span came back: kept, and the decision's prompt up to it sent to the model's cache."""
    try:
        span = call.future.result().text.strip()
    except AgentBankError as exc:
        logger.warning("transcribing ahead failed (%s); the end of the turn will do it", exc)
        return
    _keep(hearing, call.digests, call.start, call.end, span)
    replies.warm(hearing.session, hearing.services, hearing.interview, " ".join([*call.kept, span]), hearing.cipher)


def _usable(hearing: Hearing) -> partials.Ahead:
    transcriber = hearing.services.transcriber
    assert transcriber is not None
    return partials.usable(hearing.session, hearing.interview, hearing.turn, hearing.digests, transcriber.name,
                           hearing.cipher)  # fmt: skip


def _keep(hearing: Hearing, digests: list[str], start: int, end: int, text: str) -> None:
    transcriber = hearing.services.transcriber
    assert transcriber is not None
    hearing.calls.spans = None  # read again with this one
    partials.keep_span(hearing.session, hearing.interview, hearing.turn, digests, start, end, text,
                       transcriber.name, hearing.cipher)  # fmt: skip
