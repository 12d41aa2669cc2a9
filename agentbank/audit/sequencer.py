"""The sequencer: a thread in every long-running process that chains new audit events shortly after
they commit (``audit.sequence``). Several processes may run one; they take turns on a lock, and a
process that dies leaves its events to the others. Rows quarantined on the way in (written claiming a
place in the chain) are never chained; each process logs how many there are when that number changes,
a count and never what they hold."""

from __future__ import annotations

import logging
import threading
import time

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import chain, outside
from agentbank.audit import log as audit
from agentbank.audit.tiles import TileLog, outside_tiles
from agentbank.core.settings import Settings
from agentbank.db import transaction

log = logging.getLogger(__name__)
WARN_EVERY_S = 60.0  # a database that went away is reported once a minute, not on every round


class Sequencer:
    """Runs ``audit.sequence`` every ``interval_s`` seconds on a daemon thread until ``stop``."""

    def __init__(self, sessions: sessionmaker[Session], interval_s: float, tiles: TileLog | None = None) -> None:
        self._sessions = sessions
        self._tiles = tiles  # the log kept outside the database, published after each commit
        self._published = False
        self.interval_s = interval_s
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._warned_at = 0.0
        self._quarantined = 0  # the count last logged by this process

    @classmethod
    def of(cls, sessions: sessionmaker[Session], settings: Settings) -> Sequencer:
        """The bank's sequencer, publishing to the bank's tiles outside the database."""
        return cls(sessions, settings.audit_sequence_interval_s, outside_tiles(settings))

    def run_once(self) -> int:
        """Chain what is waiting now (one batch); how many events got their place."""
        with transaction(self._sessions) as session:
            placed = audit.sequence(session)
            quarantined = chain.quarantined_rows(session)  # an index of those rows alone: cheap every round
        if self._tiles is not None and (placed or not self._published):
            # After the commit, so the tiles are never ahead of the database; the first round catches up.
            with self._sessions() as session:
                outside.publish(session, self._tiles)
            self._published = True
        if quarantined != self._quarantined:
            self._quarantined = quarantined
            log.warning(
                "%d audit row(s) quarantined: written with a place in the chain the sequencer did not give them, "
                "never chained (`agentbank audit verify` counts them)",
                quarantined,
            )
        return placed

    def run_until_done(self) -> int:
        """Chain every event waiting now, batch after batch; how many."""
        placed = total = self.run_once()
        while placed >= audit.SEQUENCE_BATCH:
            placed = self.run_once()
            total += placed
        return total

    def start(self) -> Sequencer:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="audit-sequencer", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop after a last round, so what this process wrote is chained before it exits."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _loop(self) -> None:
        while True:
            stopping = self._stopping.wait(self.interval_s)
            try:
                self.run_until_done()
            except SQLAlchemyError as exc:
                if time.monotonic() - self._warned_at > WARN_EVERY_S:
                    self._warned_at = time.monotonic()
                    log.warning("could not chain new audit events (%s); trying again", type(exc).__name__)
            if stopping:
                return
