"""Limits on what one request and one client may ask: body size, URL length, requests per minute."""

from __future__ import annotations

import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from limits import RateLimitItemPerMinute
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter
from sqlalchemy import Engine
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentbank.core.errors import RateLimitedError
from agentbank.providers.call_limits import SharedRequestLimit
from app.api.errors import error_response


class BodyTooLargeError(Exception):
    """Raised inside the receive channel when a streamed body passes the limit."""


class RequestLimits:
    """Refuse bodies over ``max_body`` bytes (413) and query strings over ``max_query`` characters (414)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body: int,
        max_query: int,
        overrides: list[tuple[re.Pattern[str], int]] | None = None,
    ) -> None:
        self.app, self.max_body, self.max_query = app, max_body, max_query
        # (path pattern, limit): routes whose bodies may be larger (or must be smaller) than the rest.
        self.overrides = overrides or []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if len(scope.get("query_string", b"")) > self.max_query:
            await error_response(414, "uri_too_long", f"the query string exceeds {self.max_query} characters")(
                scope, receive, send
            )
            return
        limit = next((size for pattern, size in self.overrides if pattern.match(scope.get("path", ""))), self.max_body)
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            await self._too_large(scope, receive, send, limit)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLargeError
            return message

        try:
            await self.app(scope, counted, send)
        except BodyTooLargeError:
            await self._too_large(scope, receive, send, limit)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        await error_response(413, "payload_too_large", f"the body exceeds {limit} bytes")(scope, receive, send)


WINDOW_S = 60.0


class Limiter(Protocol):
    """Requests per minute per caller, wherever they are counted."""

    def check(self, caller: str) -> None:
        """Count one request of ``caller`` or raise RateLimitedError with the wait in seconds."""


class MemoryRateLimiter:
    """``per_minute`` requests per caller in a moving window of a minute, counted in this process's memory.

    Not the ``limits`` library's memory storage: that one starts a timer thread to expire its entries
    each time the previous timer has run out (10 ms after it started), so a client reading every few
    milliseconds paid for a new thread on most requests (half a millisecond, several at the tail on a busy
    machine), and each hit was inserted at the front of a list. Here a caller's requests of the last
    minute are a deque of their times, and callers silent for a minute are forgotten once a minute.
    """

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._per_minute, self._clock = per_minute, clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()
        self._next_sweep = 0.0

    def check(self, caller: str) -> None:
        """Count one request of ``caller`` or raise RateLimitedError with the wait in seconds."""
        now = self._clock()
        with self._lock:
            if now >= self._next_sweep:
                self._hits = {who: hits for who, hits in self._hits.items() if hits and hits[-1] > now - WINDOW_S}
                self._next_sweep = now + WINDOW_S
            hits = self._hits.setdefault(caller, deque())
            while hits and hits[0] <= now - WINDOW_S:
                hits.popleft()
            wait = hits[0] + WINDOW_S - now if len(hits) >= self._per_minute else None
            if wait is None:
                hits.append(now)  # a refused request is not counted, as the library's moving window does
        if wait is not None:
            raise RateLimitedError("too many requests", retry_after=max(1, math.ceil(wait)))


class RateLimiter:
    """``per_minute`` requests per caller in a moving window, counted by the ``limits`` library.

    The count lives in ``storage_uri``: a shared store (for example ``redis://host:6379``, with the ``redis``
    package installed) makes several API servers behind a balancer enforce one limit together instead of a
    share each (``memory://``, this process's memory, is ``MemoryRateLimiter``'s). ``database`` keeps it in the bank's
    own database (``DatabaseRateLimiter``), so no other store is needed for that.
    """

    def __init__(self, per_minute: int, storage_uri: str = "memory://") -> None:
        self._item = RateLimitItemPerMinute(per_minute)
        self._limiter = MovingWindowRateLimiter(storage_from_string(storage_uri))

    def check(self, caller: str) -> None:
        """Count one request of ``caller`` or raise RateLimitedError with the wait in seconds."""
        if self._limiter.hit(self._item, caller):
            return
        reset_at, _ = self._limiter.get_window_stats(self._item, caller)
        raise RateLimitedError("too many requests", retry_after=max(1, math.ceil(reset_at - time.time())))


class DatabaseRateLimiter:
    """The same limit kept in the bank's database (``AGENTBANK_RATE_LIMIT_STORAGE=database``): one
    allowance per caller for every API process. The engine is the bank's, once the application opened it."""

    def __init__(self, engine: Callable[[], Engine], per_minute: int) -> None:
        self._engine = engine
        self._per_minute = per_minute
        self._limit: SharedRequestLimit | None = None

    def check(self, caller: str) -> None:
        """Count one request of ``caller`` or raise RateLimitedError with the wait in seconds."""
        if self._limit is None:
            self._limit = SharedRequestLimit(self._engine(), self._per_minute)
        wait = self._limit.take(caller)
        if wait is not None:
            raise RateLimitedError("too many requests", retry_after=max(1, math.ceil(wait)))
