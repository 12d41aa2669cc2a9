"""``agentbank serve`` in a process of its own, on a free loopback port, against one database: for tests of the
browser, the clients and the documentation's examples."""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from agentbank.keys.crypto import KeyRing
from tests.support.factories import SECRET, process_keyring

SERVER_START_S = 120.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ServerProcess:
    """``agentbank serve`` on a free loopback port, against one database; can be killed and started again."""

    database_url: str
    data_dir: Path
    log_path: Path
    env_overrides: dict[str, str] = field(default_factory=dict)
    port: int = 0
    process: subprocess.Popen | None = None
    _log: io.TextIOBase | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def keys(self) -> KeyRing:
        """The server's keyring (a file in its data directory), to read what it stored."""
        return process_keyring(self.database_url, self.data_dir)

    def environment(self) -> dict[str, str]:
        return {
            **os.environ,  # the tests' isolated AGENTBANK_* settings (fake models unless overridden)
            "AGENTBANK_DATABASE_URL": self.database_url,
            "AGENTBANK_DATA_DIR": str(self.data_dir),
            "AGENTBANK_SECRET_KEY": SECRET,
            "AGENTBANK_RATE_LIMIT_PER_MINUTE": "100000",
            "AGENTBANK_EMBEDDED_THREADS": "2",
            **self.env_overrides,
        }

    def start(self, timeout_s: float = SERVER_START_S) -> ServerProcess:
        assert self.process is None or self.process.poll() is not None, "the server is already running"
        self.port = free_port()
        self._log = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 - closed in stop/kill
        self._log.write(f"\n--- starting on port {self.port}\n")
        self._log.flush()
        self.process = subprocess.Popen(
            [
                sys.executable, "-c", "from app.cli import main; main()",
                "serve", "--host", "127.0.0.1", "--port", str(self.port), "--no-demo", "--no-worker",
            ],
            env=self.environment(), stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited with {self.process.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/v1/health", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise AssertionError(f"the server did not answer within {timeout_s:.0f} s:\n{self.log()}")

    def kill(self) -> None:
        """SIGKILL: no shutdown handler runs, as after a power cut or the OOM killer."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self._close_log()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-8000:]

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=120)
