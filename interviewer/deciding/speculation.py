"""Deciding while the person is silent: the interviewer's next turn started before the turn has ended.

The end of a spoken turn is declared after a short silence when the person's words end a finished thought
(``turn_end``), and the decision then takes the embedded model a second or two. At the first pause whose
words read as finished (``AGENTBANK_END_OF_TURN_PAUSE_S`` of silence), the decision on them starts in the
background, so that by the end of the turn most of it is done. At the end of the turn the interviewer decides as
always; a chat call identical to one started ahead (same transcript, same answer, same position) takes
that call's result instead of calling the model again. If the person spoke again, the answer differs,
no call matches, and the model is simply asked again: a head start is never the record.

Before that, while the person still speaks, each span transcribed is sent as the decision's prompt up
to the answer so far (``warm``): the model reads it into its prefix cache, so the decision, ahead or
not, has only the last words and the prompt's short tail to read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from typing import Any

from agentbank.core.errors import ProviderError, TruncatedOutputError
from agentbank.providers.chat import ChatModel, ChatRequest, ChatResult, Message

logger = logging.getLogger(__name__)

MAX_AHEAD = 16  # calls kept waiting for their identical call; the oldest are dropped


def call_key(request: ChatRequest) -> str:
    """What makes two chat calls the same call."""
    content = json.dumps([list(request.messages), request.schema, request.temperature, request.max_tokens,
                          request.seed, request.frequency_penalty], sort_keys=True, default=str)  # fmt: skip
    return hashlib.sha256(content.encode()).hexdigest()


class SpeculativeChat:
    """A chat model whose calls may be made ahead: ``ahead(work)`` runs ``work`` in the background with a
    chat that keeps each call's future; a later identical ``complete`` waits for that future."""

    def __init__(self, chat: ChatModel) -> None:
        self.inner = chat
        self.name = chat.name
        self._lock = threading.Lock()
        self._ahead: OrderedDict[str, Future[ChatResult]] = OrderedDict()
        self._waiting: Future[object] | None = None
        self._later: Future[object] | None = None
        self._warming: Future[None] | None = None
        self._speaking: threading.Event | None = None  # set when the person begins to speak (``later``)
        # One at a time: the embedded model answers one call at a time anyway, and a newer head start
        # queues behind an older one rather than beside it.
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="decide-ahead")

    def __getattr__(self, attribute: str) -> Any:  # what else the model offers (counters, reset)
        return getattr(self.inner, attribute)

    def complete(self, request: ChatRequest) -> ChatResult:
        """The call's result: the one made ahead when an identical call was, else the model's own."""
        with self._lock:
            future = self._ahead.pop(call_key(request), None)
        if future is not None:
            try:
                return future.result()
            except Exception:  # the head start failed: this call is the model's own again
                logger.info("a decision made ahead failed; deciding again")
        return self.inner.complete(request)

    def ahead(self, work: Callable[[ChatModel], object]) -> Future[object]:
        """Run ``work`` in the background with a chat whose calls a later identical call can take. A
        head start still waiting for the model when a newer one comes is dropped: the newer one knows more."""
        with self._lock:
            if self._waiting is not None:
                self._waiting.cancel()  # only a head start that has not begun can be cancelled
            self._waiting = self._pool.submit(self._run, work, _Recorder(self))
            return self._waiting

    def warm(self, messages: Sequence[Message]) -> None:
        """Have the model read ``messages`` (the decision's prompt up to what the person has said so far)
        and keep them in its prefix cache, generating one token: at the end of the turn only the last
        words and the prompt's tail are left to read. A warm-up not begun yet is replaced by a newer one,
        and none is sent while a head start waits (it reads all of this anyway)."""
        with self._lock:
            if self._waiting is not None and not self._waiting.done():
                return
            if self._warming is not None:
                self._warming.cancel()
            self._warming = self._pool.submit(self._warm, list(messages))

    def _warm(self, messages: list[Message]) -> None:
        try:
            self.inner.complete(ChatRequest(messages, temperature=0.0, max_tokens=1))
        except TruncatedOutputError:
            pass  # one token was all it was asked for: the prompt is read and cached
        except ProviderError as exc:  # a cold cache costs only time
            logger.info("warming the interviewer's model failed (%s)", exc.code)

    def later(self, work: Callable[[ChatModel, bool], object], after_s: float) -> Future[object]:
        """Run ``work`` with the model in the same queue as the head starts, ``after_s`` seconds from now or
        as soon as the person begins to speak (``person_speaking``), whichever is first (the interviewer's
        notes, taken off the person's wait); ``work`` is told whether the person has begun (then their turn
        needs the cores: Whisper on their pauses, the decision on their words). Never dropped for a newer
        head start."""
        speaking = threading.Event()

        def delayed(model: ChatModel) -> object:
            # Waited for in the queue: a head start, which comes only once the person has spoken, never waits
            # behind it, and the warm-ups while they speak come after this work.
            return work(model, speaking.wait(after_s))

        with self._lock:
            self._speaking = speaking
            self._later = self._pool.submit(self._run, delayed, self.inner)
            return self._later

    def person_speaking(self) -> None:
        """The person has begun to speak: the work for later that is still waiting starts now, told so."""
        with self._lock:
            if self._speaking is not None:
                self._speaking.set()

    def settle(self, timeout: float | None = None) -> None:
        """Wait until no warm-up, head start or work for later is pending, including what they queue in
        turn (for callers that must not race them: tests, benchmarks)."""
        while True:
            with self._lock:
                pending = [f for f in (self._warming, self._waiting, self._later) if f is not None and not f.done()]
            if not pending:
                return
            for future in pending:
                with contextlib.suppress(CancelledError):  # replaced by a newer one meanwhile
                    future.result(timeout)

    def _run(self, work: Callable[[ChatModel], object], model: ChatModel) -> object:
        try:
            return work(model)
        except Exception:  # a head start or notes that fail cost nothing: the end of the turn calls the
            # model, and notes not taken stay due
            logger.info("the interviewer's work in the background failed; nothing waits on it", exc_info=True)
            return None

    def made_ahead(self, request: ChatRequest) -> ChatResult:
        """A call made ahead: its future is kept (see ``complete``) before the model is called."""
        key = call_key(request)
        future: Future[ChatResult] = Future()
        with self._lock:
            if key in self._ahead:  # the same call is already on its way
                waiting = self._ahead[key]
            else:
                waiting = None
                self._ahead[key] = future
                while len(self._ahead) > MAX_AHEAD:
                    self._ahead.popitem(last=False)
        if waiting is not None:
            return waiting.result()
        try:
            result = self.inner.complete(request)
        except BaseException as exc:
            future.set_exception(exc)
            raise
        future.set_result(result)
        return result

    def stop(self) -> None:
        """Start nothing more ahead (a call in flight ends); the model stays open for its owner."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop, and close the model."""
        self.stop()
        self.inner.close()


class _Recorder:
    """The chat a head start calls: each call's result is kept for the identical call to come."""

    def __init__(self, owner: SpeculativeChat) -> None:
        self._owner = owner
        self.name = owner.name

    def complete(self, request: ChatRequest) -> ChatResult:
        return self._owner.made_ahead(request)

    def close(self) -> None:
        """Nothing of its own to close."""
