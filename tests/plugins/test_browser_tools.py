"""A run that skips the browser tests says so in its header and in a line of its own at the end."""

from types import SimpleNamespace

from tests.plugins import browser_tools


class Reporter:
    def __init__(self, skipped):
        self.stats = {"skipped": skipped}
        self.lines: list[str] = []

    def write_sep(self, sep, text, **markup):
        self.lines.append(text)


def test_skipped_browser_tests_are_named_at_the_end(monkeypatch):
    monkeypatch.setattr(browser_tools, "missing_browser_tools", lambda: ["FFmpeg"])
    reporter = Reporter([SimpleNamespace(longrepr=("x.py", 1, f"Skipped: {browser_tools.SKIP_REASON}"))] * 2)
    browser_tools.pytest_terminal_summary(reporter, 0, None)
    assert reporter.lines == [
        "2 browser tests SKIPPED: FFmpeg missing; this was not the whole suite (apt-get install chromium ffmpeg)"
    ]
    assert "WILL BE SKIPPED, missing FFmpeg" in browser_tools.pytest_report_header(None)


def test_a_run_without_such_skips_says_nothing_more(monkeypatch):
    monkeypatch.setattr(browser_tools, "missing_browser_tools", lambda: [])
    reporter = Reporter([SimpleNamespace(longrepr=("x.py", 1, "Skipped: other reason"))])
    browser_tools.pytest_terminal_summary(reporter, 0, None)
    assert reporter.lines == []
    assert browser_tools.pytest_report_header(None) == "browser tests: Chromium and FFmpeg found"
