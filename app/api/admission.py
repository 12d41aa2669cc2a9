"""At most so many requests inside the application at once; the rest wait their turn without a thread.

Why: a request takes a pooled database connection in a worker thread, then needs a thread again for its
route and to give the connection back. When more requests wait for a connection than there are threads,
the requests holding connections never get a thread back, and everybody waits for the pool's timeout:
64 clients at once turned every read into an error after 30 s. Admitting no more requests than the pool
has connections means no thread ever waits for one; the others wait here, asynchronously, in order, and
one that waits too long is told to come back (503 with Retry-After), never a 500.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.errors import error_response

ADMISSION_WAIT_S = 30.0  # then 503: a client retrying later does better than one held longer


class Admission:
    """Admit at most ``limit()`` HTTP requests at once (asked once, on the first request, when the bank and
    its pool exist); wait up to ``wait_s`` for a turn, then 503."""

    def __init__(self, app: ASGIApp, *, limit: Callable[[], int], wait_s: float = ADMISSION_WAIT_S) -> None:
        self.app, self.limit, self.wait_s = app, limit, wait_s
        self._turns: asyncio.Semaphore | None = None  # made in the server's event loop, on the first request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._turns is None:
            self._turns = asyncio.Semaphore(max(1, self.limit()))
        try:
            await asyncio.wait_for(self._turns.acquire(), self.wait_s)
        except TimeoutError:
            busy = error_response(503, "busy", "the bank has too many requests at once; try again shortly",
                                  {"Retry-After": "1"})  # fmt: skip
            await busy(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._turns.release()
