"""Shared helpers of the tests (moved from ``tests.app.test_cli``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def agentbank(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from app.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **env},
        timeout=300,
    )


SAMPLE = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "transcripts" / "sample_interview"
