"""A process's model calls in flight: at most so many at once, whoever asks (a job's answers, a build's
reflections).

A remote endpoint answers many calls at the same time, so a process keeps several in flight; the embedded
model answers one at a time, and its calls stay in the asking thread in order, so consecutive prompts share
the longest prefix of its cache. One ``InFlight`` per process is shared by everything that calls the model,
so jobs and builds together never have more calls in flight than the setting allows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, as_completed
from typing import TypeVar

R = TypeVar("R")


def _nothing(_index: int, _result: object) -> None:
    return None


class InFlight:
    """Runs calls at most ``size`` at once for the whole process.

    Callers must not be this object's own threads (a call that waited on calls of the same pool could wait
    for ever): the worker's tasks and the command line's builders run on threads of their own.
    """

    def __init__(self, size: int = 1) -> None:
        if size < 1:
            raise ValueError("at least one call must be allowed in flight")
        self.size = size
        self._executor = ThreadPoolExecutor(size, thread_name_prefix="model-call") if size > 1 else None
        self._closed = threading.Event()

    def run_all(
        self, calls: Sequence[Callable[[], R]], done: Callable[[int, R], None] = _nothing
    ) -> list[R]:  # fmt: skip
        """Every call's result, in the calls' order; ``done`` hears each (its index and result) in the
        caller's thread as soon as it returns, so it can be stored at once.

        The first error (of a call, or of ``done``) stops the calls not yet started and is raised once those
        in flight have ended; their results still reach ``done``: the work is paid for, and a retry finds it.
        """
        results: dict[int, R] = {}
        if self._executor is None:
            for index, call in enumerate(calls):
                results[index] = call()
                done(index, results[index])
            return [results[index] for index in range(len(calls))]
        futures: dict[Future[R], int] = {
            self._executor.submit(self._unless_closed, call): index for index, call in enumerate(calls)
        }
        error: BaseException | None = None
        try:
            for future in as_completed(futures):
                failure: BaseException | None
                if future.cancelled():  # by the first error below, or from outside: the process is stopping
                    failure = CancelledError("the process stopped before this call was made")
                else:
                    failure = future.exception()
                if failure is None:
                    try:
                        results[futures[future]] = future.result()
                        done(futures[future], results[futures[future]])
                        continue
                    except Exception as exc:  # the agent left the bank, or the database went away
                        failure = exc
                if error is None:
                    error = failure
                    for waiting in futures:
                        waiting.cancel()  # those not started; those in flight end on their own
        finally:
            for waiting in futures:
                waiting.cancel()
        if error is not None:
            raise error
        return [results[index] for index in range(len(calls))]

    def _unless_closed(self, call: Callable[[], R]) -> R:
        if self._closed.is_set():
            raise CancelledError("the process stopped before this call was made")
        return call()

    def close(self) -> None:
        """Start no more calls; calls in flight end with their model, and those waiting fail at once.

        Not ``shutdown(cancel_futures=True)``: a future cancelled there never tells ``as_completed``, and
        the caller waiting on it would wait for ever."""
        self._closed.set()
        if self._executor is not None:
            self._executor.shutdown(wait=False)
