"""Workers in processes of their own, for tests that kill one mid-task: started against a database with
short heartbeats (so another takes over a silent one within seconds), and killed while a row they need is
held by the test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from tests.support.factories import SECRET

STALLED_AFTER_S = 2


def worker_env(url: str) -> dict[str, str]:
    return {
        **os.environ,
        "AGENTBANK_DATABASE_URL": url,
        "AGENTBANK_SECRET_KEY": SECRET,
        "AGENTBANK_WORKER_HEARTBEAT_S": "0.5",
        "AGENTBANK_WORKER_STALLED_AFTER_S": str(STALLED_AFTER_S),
    }


def start_worker(url: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", "from app.cli import main; main()", "worker", *args],
        env=worker_env(url), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def wait_for(predicate, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError("timed out")


def kill_while_blocked(
    engine: Engine, worker: subprocess.Popen, blocker: Session, seconds: float = 60.0,
    before_kill: Callable[[], None] | None = None,
) -> None:  # fmt: skip
    """SIGKILL the worker once it waits on the row ``blocker`` holds (mid-write, as a power cut would find
    it; ``before_kill`` reads what it had done by then), release the row, and wait past the stalled-worker
    timeout so another worker takes the task."""

    def waiting_on_lock() -> bool:
        with engine.connect() as conn:
            query = text("SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'")
            return bool(conn.scalar(query))

    wait_for(waiting_on_lock, seconds)
    if before_kill is not None:
        before_kill()
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    blocker.rollback()
    blocker.close()
    time.sleep(STALLED_AFTER_S + 1)
