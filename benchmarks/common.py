"""Helpers shared by the benchmarks: machine facts and writing results."""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil

RESULTS = Path(__file__).parent / "results"


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(total / 2**30, 1),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
        # At the end of the run: other work on the machine distorts every figure.
        "load_average_1_5_15_min": [round(x, 2) for x in os.getloadavg()],
    }


def save(name: str, figures: dict[str, Any], results: Path = RESULTS) -> Path:
    """Write ``figures`` with the machine facts to ``results/<name>-<date>.json``, or ``<name>-<date>-2.json``
    and so on when a run of the same day is kept there already: a kept result is quoted by a note, and a
    second run the same day must not overwrite it."""
    results.mkdir(exist_ok=True)
    stem = f"{name}-{time.strftime('%Y-%m-%d')}"
    path, n = results / f"{stem}.json", 1
    while path.exists():
        n += 1
        path = results / f"{stem}-{n}.json"
    path.write_text(json.dumps({"machine": machine(), "figures": figures}, indent=2) + "\n")
    return path


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rss(pid: int) -> int:
    """A process's resident memory in bytes (0 once it has ended)."""
    try:
        return int(psutil.Process(pid).memory_info().rss)
    except psutil.Error:
        return 0


def start_local(module: str, port: int, *args: str, what: str) -> subprocess.Popen[bytes]:
    """Run ``python -m module --port port *args`` (one of the local fake endpoints) in a process of its own, from
    the repository's root, and return once its ``/stats`` answers."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", module, "--port", str(port), *args], cwd=root)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            local_stats(port)
            return proc
        except OSError:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit(f"the local {what} did not start")


def local_stats(port: int) -> dict[str, float]:
    """The counts a local fake endpoint keeps at ``/stats``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=5) as response:
        counts: dict[str, float] = json.load(response)
    return counts
