"""Live API tokens kept in memory, so a read of a published table checks its token without a transaction.

A token's principal is looked up once (``principal_for_token``) and then kept for at most ``ttl_s``, but
only while this process listens to the database's word of every change to tokens and clients: a trigger
(migration 0030) notifies ``agentbank_access`` whenever a statement changes either table, whoever runs it,
and the listener drops every kept principal when the change commits. A revoked token or client is
therefore refused from the commit on (within the notification's delivery, milliseconds), and a process
that lost its listening connection keeps nothing until it listens again: it then looks every token up.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import psycopg
from sqlalchemy.orm import Session, sessionmaker

from agentbank.access.clients import live_principal, token_hash
from agentbank.access.principals import Principal

log = logging.getLogger(__name__)
CHANNEL = "agentbank_access"
RELEASES = "agentbank_release"  # a release was cut (``open_tier.releases``): publish it
MAX_KEPT = 10_000


@dataclass(frozen=True)
class _Kept:
    principal: Principal
    until: float  # monotonic


class LiveTokens:
    """Principals of API tokens, kept while this process hears of every change to tokens and clients."""

    def __init__(self, sessions: sessionmaker[Session], connect: Callable[[], psycopg.Connection] | None,
                 ttl_s: float = 60.0, on_release: Callable[[], None] | None = None) -> None:  # fmt: skip
        self._sessions, self._connect, self.ttl_s = sessions, connect, ttl_s
        # Called (on a thread of its own) when another process commits a release: the API publishes it too.
        self._on_release = on_release
        self._kept: dict[str, _Kept] = {}
        self._lock = threading.Lock()
        self._generation = 0  # moves on every change heard: a lookup that raced a change is not kept
        self._listening = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def listening(self) -> bool:
        return self._listening.is_set()

    def holds(self, token: str) -> bool:
        """Whether the token's principal is kept now (so ``principal`` answers without the database)."""
        if not self._listening.is_set():
            return False
        with self._lock:
            kept = self._kept.get(token_hash(token))
        return kept is not None and kept.until > time.monotonic()

    def principal(self, token: str) -> Principal | None:
        """The principal behind a live API token (not a console session), or None."""
        digest = token_hash(token)
        now = time.monotonic()
        if self._listening.is_set():
            with self._lock:
                kept = self._kept.get(digest)
            if kept is not None and kept.until > now:
                return kept.principal
        with self._lock:
            generation = self._generation
        with self._sessions() as session:
            principal, expires_at = live_principal(session, token)
        if principal is not None and self._listening.is_set():
            left = (expires_at - datetime.now(UTC)).total_seconds() if expires_at is not None else 0.0
            with self._lock:
                if generation == self._generation and len(self._kept) < MAX_KEPT:
                    self._kept[digest] = _Kept(principal, now + min(self.ttl_s, left))
        return principal

    def forget(self) -> None:
        """Drop every kept principal (a change to tokens or clients committed)."""
        with self._lock:
            self._kept.clear()
            self._generation += 1

    def start(self) -> LiveTokens:
        if self._connect is not None and self._thread is None:
            self._thread = threading.Thread(target=self._listen, name="live-tokens", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _listen(self) -> None:
        assert self._connect is not None
        while not self._stopping.is_set():
            try:
                with self._connect() as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    if self._on_release is not None:
                        conn.execute(f"LISTEN {RELEASES}")
                    self.forget()  # anything kept before listening may have changed meanwhile
                    self._listening.set()
                    while not self._stopping.is_set():
                        for note in conn.notifies(timeout=1.0, stop_after=1):
                            if note.channel == RELEASES and self._on_release is not None:
                                threading.Thread(target=self._on_release, name="publish", daemon=True).start()
                            else:
                                self.forget()
            except psycopg.Error as exc:
                log.warning("not listening for token changes (%s); every token is looked up", type(exc).__name__)
            finally:
                self._listening.clear()
                self.forget()
            self._stopping.wait(1.0)
