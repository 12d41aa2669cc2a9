"""Stopping a worker in order: no new task, a bounded grace for the tasks in flight, then their model
calls are cut and the tasks go back to the queue as they were.

The queue counts every attempt that ends in an error, and a blocking task that runs on the queue's own
thread pool holds the process's exit until its model call returns (minutes on a slow machine). So each
task runs on a thread of its own, and a task that fails because the worker is stopping is never handed
back to the queue as an error: ``Worker.stop`` puts it back untouched, attempts unchanged.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from agentbank.core.errors import AgentBankError
from agentbank.providers.chat import ChatModel, ChatRequest, ChatResult


class WorkerStoppingError(AgentBankError):
    """A task asked for a model call after its worker began to stop."""


@runtime_checkable
class Abortable(Protocol):
    """A model whose calls in flight can be cut from another thread."""

    def abort(self) -> None: ...


class StoppableChat:
    """A chat model that refuses new calls once its worker stops, so a task ends at its next call."""

    def __init__(self, chat: ChatModel, stopping: threading.Event) -> None:
        self._chat = chat
        self._stopping = stopping
        self.name = chat.name

    def complete(self, request: ChatRequest) -> ChatResult:
        """The wrapped model's completion, unless the worker is stopping."""
        if self._stopping.is_set():
            raise WorkerStoppingError("the worker is stopping")
        return self._chat.complete(request)

    def close(self) -> None:
        """Closed by the bank that owns the wrapped model."""


class TaskThreads:
    """Runs a worker's blocking tasks on threads of their own and knows which are unfinished."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._running: set[int] = set()
        self._interrupted: set[int] = set()

    async def run(self, task_id: int, work: Callable[[], None]) -> None:
        """Run ``work`` on its own thread and wait for it. If it fails once stopping has begun, this
        never returns: the task is the stopper's to put back, not the queue's to count as failed."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def settle(error: BaseException | None) -> None:
            if not done.done():
                done.set_result(None) if error is None else done.set_exception(error)

        def target() -> None:
            try:
                work()
            except BaseException as exc:
                if self.stopping.is_set():
                    with self._lock:
                        self._interrupted.add(task_id)
                    return
                loop.call_soon_threadsafe(settle, exc)
            else:
                loop.call_soon_threadsafe(settle, None)

        with self._lock:
            self._running.add(task_id)
        # A daemon thread: a model call that outlives the grace never holds the process's exit.
        threading.Thread(target=target, name=f"task {task_id}", daemon=True).start()
        try:
            await done
        finally:
            with self._lock:
                self._running.discard(task_id)
                self._interrupted.discard(task_id)

    def unfinished(self) -> list[int]:
        """Tasks running or interrupted, not yet handed back to the queue."""
        with self._lock:
            return sorted(self._running)

    def only_interrupted(self) -> bool:
        """Whether tasks are held and every one was interrupted (none is still working)."""
        with self._lock:
            return bool(self._running) and self._running <= self._interrupted


def wait_until(condition: Callable[[], bool], seconds: float, poll_s: float = 0.05) -> bool:
    """Poll ``condition`` for up to ``seconds``; whether it came true."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_s)
    return True
