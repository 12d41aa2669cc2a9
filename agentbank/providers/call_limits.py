"""Requests and tokens per minute of a model endpoint, one limit for every process of the bank.

Ten workers on five machines share one allowance, so it lives in the bank's database: one row per
limited quantity holds its *theoretical arrival time* (the generic cell rate algorithm, as rate
limiters of network switches and API gateways use it). A process reserves its next slots with one
atomic statement and its callers sleep until their slot; nobody polls, and the database's clock is the
only clock.

- Requests: each call takes ``60 / requests_per_minute`` seconds of the allowance, so calls start evenly
  spaced. A process reserves as many consecutive slots at once as it started calls in the last second
  (at most a second's allowance): slots are the process's alone, so the limit holds across processes
  whatever the batch, and a slot left unused (its time past) is wasted, never taken late.
- With no limit of requests only the holds below are read, once a second.
- Tokens: known only after a call; each call waits until the tokens already spent are within a
  minute's allowance. A process counts its own at once and writes them with its next reservation, when
  they reach a second's allowance, or within a second, so the others learn of them at most so late.
- A server's ``Retry-After`` holds every process back until then: the process told at once, the others
  at their next reservation (within a second).
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import SQLAlchemyError

from agentbank.core.settings import Settings

log = logging.getLogger(__name__)

# Reserve ``cost`` seconds of the allowance; return how long the caller waits for the first of it, given
# the ``tolerance`` (seconds of allowance that may be spent ahead).
_RESERVE = text(
    """
    INSERT INTO call_limits (key, tat) VALUES (:key, clock_timestamp() + make_interval(secs => :cost))
    ON CONFLICT (key) DO UPDATE
        SET tat = greatest(call_limits.tat, clock_timestamp()) + make_interval(secs => :cost)
    RETURNING extract(epoch FROM tat - make_interval(secs => :cost + :tolerance) - clock_timestamp())
    """
)
_HOLD = text(
    """
    INSERT INTO call_limits (key, tat) VALUES (:key, clock_timestamp() + make_interval(secs => :seconds))
    ON CONFLICT (key) DO UPDATE
        SET tat = greatest(call_limits.tat, clock_timestamp() + make_interval(secs => :seconds))
    """
)
# Take one request of a per-minute allowance if the allowance has room; no row comes back when it has none
# (and nothing is counted: a refused request does not push the caller's next one further away).
_TAKE = text(
    """
    INSERT INTO call_limits (key, tat) VALUES (:key, clock_timestamp() + make_interval(secs => :cost))
    ON CONFLICT (key) DO UPDATE
        SET tat = greatest(call_limits.tat, clock_timestamp()) + make_interval(secs => :cost)
        WHERE greatest(call_limits.tat, clock_timestamp()) - make_interval(secs => :tolerance) <= clock_timestamp()
    RETURNING tat
    """
)
_WAIT = text(
    "SELECT extract(epoch FROM tat - make_interval(secs => :tolerance) - clock_timestamp()) FROM call_limits "
    "WHERE key = :key"
)
_SWEEP = text("DELETE FROM call_limits WHERE key LIKE 'api %' AND tat < clock_timestamp() - interval '1 hour'")
SWEEP_EVERY = 1000  # requests between removals of callers idle for an hour
TOKEN_TOLERANCE_S = 60.0  # a minute's tokens may be spent at once, as providers' per-minute limits allow
BATCH_S = 1.0  # a batch spans at most this much allowance; a reading of holds and tokens is kept this long
BATCH_CALLS = 64  # slots reserved at once at most
LATE_S = 0.05  # a slot is still taken this long after its time (a thread's wake-up); an older one is wasted


class SharedCallLimit:
    """The shared limit of one endpoint (``name``: its URL and model, never a key), for every thread of
    a process: its reservations, readings and unwritten tokens are the process's, behind one lock."""

    def __init__(
        self,
        engine: Engine,
        name: str,
        *,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._engine = engine
        # Always kept, even with no limit of requests: a Retry-After then still holds every process.
        self._requests = (f"{name} requests", 60.0 / requests_per_minute if requests_per_minute else 0.0)
        self._tokens = (f"{name} tokens", 60.0 / tokens_per_minute) if tokens_per_minute else None
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._slots: collections.deque[float] = collections.deque()  # reserved starts (clock), in order
        self._free_at = 0.0  # with no limit of requests: when the last hold read ends
        self._fresh_until = 0.0  # until when that reading is trusted
        self._reading = False  # a thread reads the holds now
        self._held_until = 0.0  # when the last Retry-After told to this process ends
        self._tokens_free_at = 0.0  # when the tokens spent are within a minute's allowance
        self._tokens_fresh_until = 0.0  # until when the others' tokens, read with it, are trusted
        self._unwritten = 0  # tokens counted here, not yet in the database
        self._flush: threading.Timer | None = None
        self._recent: collections.deque[float] = collections.deque()  # this process's turns, the last BATCH_S

    def wait_turn(self) -> float:
        """Wait for this call's turn; returns the seconds waited."""
        read = False
        with self._lock:
            now = self._clock()
            self._recent.append(now)
            while self._recent[0] < now - BATCH_S:
                self._recent.popleft()
            if self._requests[1]:
                start = self._slot(now)
                if start is None:  # each call needs a slot of its own: the others wait for these
                    start = self._reserve()
            else:  # a reading of the holds is due: one thread reads, the others go on with the last
                start, read = self._free_at, now >= self._fresh_until and not self._reading
                self._reading = self._reading or read
            if self._tokens is not None and now >= self._tokens_fresh_until:
                with self._engine.begin() as conn:
                    self._write_tokens(conn)
            floor = max(self._held_until, self._tokens_free_at)
        if read:
            start = self._read_holds(now)
        wait = max(0.0, max(start, floor) - self._clock())
        if wait > 0:
            self._sleep(wait)
        return wait

    def spent(self, tokens: int) -> None:
        """Count a finished call's tokens against the allowance."""
        if self._tokens is None or tokens <= 0:
            return
        with self._lock:
            # The database's update (below) done here at once, so this process never waits for a write.
            now = self._clock()
            self._tokens_free_at = max(self._tokens_free_at, now - TOKEN_TOLERANCE_S) + tokens * self._tokens[1]
            self._unwritten += tokens
            if self._unwritten * self._tokens[1] >= BATCH_S:
                with self._engine.begin() as conn:
                    self._write_tokens(conn)
            elif self._flush is None:  # written within BATCH_S even if no call follows
                self._flush = threading.Timer(BATCH_S, self._write_later)
                self._flush.daemon = True
                self._flush.start()

    def hold(self, seconds: float) -> None:
        """Nobody calls the endpoint for ``seconds`` (it answered 429 with ``Retry-After``)."""
        log.info("the chat endpoint asked to wait %.1f s; every process of the bank waits", seconds)
        with self._engine.begin() as conn:
            conn.execute(_HOLD, {"key": self._requests[0], "seconds": seconds})
        with self._lock:
            self._held_until = max(self._held_until, self._clock() + seconds)
            self._slots.clear()  # reserved before the hold, they would all start as it ends: reserved anew

    def _slot(self, now: float) -> float | None:
        """The start of a slot this process holds, if it has one left; None when it must reserve."""
        while self._slots and self._slots[0] < now - LATE_S:
            self._slots.popleft()  # its time passed unused: taken now, it would start closer to the next
        return self._slots.popleft() if self._slots else None

    def _reserve(self) -> float:
        """Reserve this process's next slots, as many as it started calls in the last BATCH_S; the first's
        start."""
        cost = self._requests[1]
        count = max(1, min(len(self._recent), BATCH_CALLS, int(BATCH_S / cost)))
        with self._engine.begin() as conn:
            reply = conn.execute(_RESERVE, {"key": self._requests[0], "cost": count * cost, "tolerance": 0.0})
            first = self._clock() + max(0.0, float(reply.scalar_one()))
        self._slots = collections.deque(first + n * cost for n in range(1, count))
        return first

    def _read_holds(self, now: float) -> float:
        """Read the holds (no limit of requests), outside the lock; when this process may call."""
        try:
            with self._engine.begin() as conn:
                reply = conn.execute(_RESERVE, {"key": self._requests[0], "cost": 0.0, "tolerance": 0.0})
                free_at = self._clock() + max(0.0, float(reply.scalar_one()))
        finally:
            with self._lock:
                self._reading = False
        with self._lock:
            self._free_at, self._fresh_until = free_at, now + BATCH_S
        return free_at

    def _write_tokens(self, conn: Connection) -> None:
        """Add the unwritten tokens to the database's count and read it back (the others' included)."""
        assert self._tokens is not None
        key, per_token = self._tokens
        cost = self._unwritten * per_token
        wait = conn.execute(_RESERVE, {"key": key, "cost": cost, "tolerance": TOKEN_TOLERANCE_S}).scalar_one()
        self._tokens_free_at = self._clock() + float(wait) + cost  # the reply leaves out what it added
        self._unwritten = 0
        self._tokens_fresh_until = self._clock() + BATCH_S

    def _write_later(self) -> None:
        with self._lock:
            self._flush = None
            if not self._unwritten:
                return
            try:
                with self._engine.begin() as conn:
                    self._write_tokens(conn)
            except SQLAlchemyError:  # kept, and written with the next call's reservation
                log.warning("could not count the chat endpoint's tokens in the database; counted later")


def shared_call_limit(settings: Settings, engine: Engine) -> SharedCallLimit | None:
    """The limit of the configured remote chat endpoint (None for the embedded model and the fake)."""
    if settings.chat_provider != "openai":
        return None
    return SharedCallLimit(
        engine,
        f"{settings.chat_base_url or 'https://api.openai.com/v1'} {settings.chat_model}",
        requests_per_minute=settings.chat_requests_per_minute,
        tokens_per_minute=settings.chat_tokens_per_minute,
    )


class SharedRequestLimit:
    """``per_minute`` requests per caller, counted in the bank's database so that every API process
    behind a balancer enforces one limit together (a minute's allowance may be spent at once)."""

    def __init__(self, engine: Engine, per_minute: int) -> None:
        self._engine = engine
        self._cost = 60.0 / per_minute
        self._tolerance = 60.0 - self._cost
        self._taken = 0

    def take(self, caller: str) -> float | None:
        """Count one request of ``caller``; None when allowed, else the seconds until one is."""
        key = f"api {caller}"
        with self._engine.begin() as conn:
            if conn.execute(_TAKE, {"key": key, "cost": self._cost, "tolerance": self._tolerance}).first():
                self._taken += 1
                if self._taken % SWEEP_EVERY == 0:
                    conn.execute(_SWEEP)
                return None
            wait = conn.execute(_WAIT, {"key": key, "tolerance": self._tolerance}).scalar_one()
        return max(float(wait), 0.0)
