"""A process's model calls in flight: at most so many at once, whichever task asks.

A remote endpoint answers many calls at the same time, so a worker keeps several in flight; the embedded
model answers one at a time, and its calls stay in the asking thread in order, so consecutive prompts
share the longest prefix of its cache.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed

from agentbank.answering.plans import Made, PendingCall, Plan

Make = Callable[[PendingCall], Made]
Store = Callable[[Plan, PendingCall, Made], None]


class CallPool:
    """Makes plans' calls, at most ``size`` in flight for the whole process, and stores each as it returns."""

    def __init__(self, size: int = 1) -> None:
        if size < 1:
            raise ValueError("at least one call must be allowed in flight")
        self.size = size
        self._executor = ThreadPoolExecutor(size, thread_name_prefix="model-call") if size > 1 else None

    def make(self, plans: Sequence[Plan], make: Make, store: Store) -> None:
        """Make every call of ``plans`` and store each answer as soon as its call returns. The first error
        stops the calls not yet started and is raised once those in flight have ended (their answers
        are stored: the work is paid for, and a retry finds it in the cache)."""
        calls = [(plan, call) for plan in plans for call in plan.calls]
        if self._executor is None or len(calls) < 2:
            for plan, call in calls:
                store(plan, call, make(call))
            return
        futures: dict[Future[Made], tuple[Plan, PendingCall]] = {
            self._executor.submit(make, call): (plan, call) for plan, call in calls
        }
        error: BaseException | None = None
        try:
            for future in as_completed(futures):
                if future.cancelled():
                    continue
                failure = future.exception()
                if failure is None:
                    try:
                        store(*futures[future], future.result())
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

    def close(self) -> None:
        """Start no more calls; calls in flight end with their model."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
