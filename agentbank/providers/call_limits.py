"""Requests and tokens per minute of a model endpoint, one limit for every process of the bank.

Ten workers on five machines share one allowance, so it lives in the bank's database: one row per
limited quantity holds its *theoretical arrival time* (the generic cell rate algorithm, as rate
limiters of network switches and API gateways use it). A caller reserves the next slot with one
atomic statement and sleeps until its slot; nobody polls, and the database's clock is the only clock.

- Requests: each call reserves ``60 / requests_per_minute`` seconds, so calls start evenly spaced.
- Tokens: known only after a call; each call waits until the tokens already spent are within a
  minute's allowance, then adds what it used.
- A server's ``Retry-After`` holds every process back until then, not only the one that was told.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from sqlalchemy import Engine, text

from agentbank.core.settings import Settings

log = logging.getLogger(__name__)

# Reserve ``cost`` seconds of the allowance; return how long the caller waits for its slot, given the
# ``tolerance`` (seconds of allowance that may be spent ahead).
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


class SharedCallLimit:
    """The shared limit of one endpoint (``name``: its URL and model, never a key)."""

    def __init__(
        self,
        engine: Engine,
        name: str,
        *,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._engine = engine
        # Always kept, even with no limit of requests: a Retry-After then still holds every process.
        self._requests = (f"{name} requests", 60.0 / requests_per_minute if requests_per_minute else 0.0)
        self._tokens = (f"{name} tokens", 60.0 / tokens_per_minute) if tokens_per_minute else None
        self._sleep = sleep

    def wait_turn(self) -> float:
        """Wait for this call's turn; returns the seconds waited."""
        wait = self._reserve(self._requests[0], self._requests[1], 0.0)
        if self._tokens is not None:
            wait = max(wait, self._reserve(self._tokens[0], 0.0, TOKEN_TOLERANCE_S))
        if wait > 0:
            self._sleep(wait)
        return wait

    def spent(self, tokens: int) -> None:
        """Count a finished call's tokens against the allowance."""
        if self._tokens is not None and tokens > 0:
            self._reserve(self._tokens[0], tokens * self._tokens[1], 0.0)

    def hold(self, seconds: float) -> None:
        """Nobody calls the endpoint for ``seconds`` (it answered 429 with ``Retry-After``)."""
        log.info("the chat endpoint asked to wait %.1f s; every process of the bank waits", seconds)
        with self._engine.begin() as conn:
            conn.execute(_HOLD, {"key": self._requests[0], "seconds": seconds})

    def _reserve(self, key: str, cost: float, tolerance: float) -> float:
        with self._engine.begin() as conn:
            wait = conn.execute(_RESERVE, {"key": key, "cost": cost, "tolerance": tolerance}).scalar_one()
        return max(0.0, float(wait))


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
