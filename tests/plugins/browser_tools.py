"""Says at the top and at the end of a run when the browser tests cannot run, so that a run without
Chromium and FFmpeg never passes for the whole suite."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package; CI installs it
INSTALL = "apt-get install chromium ffmpeg"
SKIP_REASON = f"Chromium is not installed at {CHROMIUM} ({INSTALL}; CI installs both)"


def missing_browser_tools() -> list[str]:
    """What the browser tests need and this machine lacks."""
    missing = [] if CHROMIUM.is_file() else [f"Chromium ({CHROMIUM})"]
    if shutil.which("ffmpeg") is None:
        missing.append("FFmpeg")
    return missing


def pytest_report_header(config: pytest.Config) -> str:
    missing = missing_browser_tools()
    if not missing:
        return "browser tests: Chromium and FFmpeg found"
    return f"browser tests: WILL BE SKIPPED, missing {' and '.join(missing)} ({INSTALL})"


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if SKIP_REASON in str(r.longrepr)]
    if skipped:
        terminalreporter.write_sep(
            "!", f"{len(skipped)} browser tests SKIPPED: {' and '.join(missing_browser_tools())} missing; "
            f"this was not the whole suite ({INSTALL})", yellow=True, bold=True,
        )  # fmt: skip
