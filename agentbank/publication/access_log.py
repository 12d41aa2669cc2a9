"""The access log of published tables: reads per client and day, counted in memory and added in batches.

A read of a published table is no use of an agent, so it writes no audit event; the bank still knows who
reads how much (abuse, rate limits, reporting), from this log. Each API process counts its reads in memory
and adds them to ``open_reads`` every ``interval_s`` and when it stops, in one transaction per flush, never
per read. A process killed between flushes loses at most that interval's counts.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from datetime import UTC, date, datetime

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from agentbank.db import transaction
from agentbank.db.models import OpenRead

log = logging.getLogger(__name__)


class ReadCounts:
    """Reads of published tables per client and day, kept until the next flush."""

    def __init__(self, sessions: sessionmaker[Session] | None, interval_s: float = 10.0) -> None:
        self._sessions, self.interval_s = sessions, interval_s
        self._reads: Counter[tuple[str, date]] = Counter()
        self._not_modified: Counter[tuple[str, date]] = Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def count(self, client_id: str, *, not_modified: bool = False) -> None:
        key = (client_id, datetime.now(UTC).date())
        with self._lock:
            (self._not_modified if not_modified else self._reads)[key] += 1

    def pending(self) -> int:
        with self._lock:
            return sum(self._reads.values()) + sum(self._not_modified.values())

    def flush(self) -> int:
        """Add what was counted to the log; how many reads. Counts that could not be written are kept."""
        with self._lock:
            reads, not_modified = self._reads, self._not_modified
            self._reads, self._not_modified = Counter(), Counter()
        keys = set(reads) | set(not_modified)
        if not keys or self._sessions is None:
            return 0
        rows = [{"client_id": c, "day": d, "reads": reads[(c, d)], "not_modified": not_modified[(c, d)]}
                for c, d in sorted(keys)]  # fmt: skip
        statement = insert(OpenRead)
        statement = statement.on_conflict_do_update(
            index_elements=["client_id", "day"],
            set_={"reads": OpenRead.reads + statement.excluded.reads,
                  "not_modified": OpenRead.not_modified + statement.excluded.not_modified},
        )  # fmt: skip
        try:
            with transaction(self._sessions) as session:
                session.execute(statement, rows)
        except SQLAlchemyError:
            with self._lock:  # kept for the next flush
                self._reads.update(reads)
                self._not_modified.update(not_modified)
            log.warning("could not add %d reads to the access log; kept for the next flush", len(rows))
            return 0
        return sum(reads.values()) + sum(not_modified.values())

    def start(self) -> ReadCounts:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="open-reads", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.flush()

    def _run(self) -> None:
        while not self._stopping.wait(self.interval_s):
            self.flush()
