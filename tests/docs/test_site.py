"""The documentation site builds strict (every page in the navigation, every internal link and anchor
resolves, the reference drawn from the code), and its pages keep the rules their examples and screenshots
follow: a skipped example says why, a block's language says whether it runs, a screenshot shown is one a
browser test keeps."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.docs import pages
from tests.support.docs_screens import SCREENSHOTS

IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def test_the_site_builds_strict_with_every_page_in_the_navigation(tmp_path):
    """mkdocs' strict mode turns each warning into a failure: a page left out of the navigation, a link or
    anchor that does not resolve, a reference marker the code cannot fill."""
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                           cwd=pages.ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    site = tmp_path / "site"
    for page in pages.pages():
        assert (site / pages.name(page)).with_suffix(".html").is_file(), pages.name(page)
    commands = (site / "reference" / "commands.html").read_text(encoding="utf-8")
    assert "agentbank audit verify" in commands and "reference:" not in commands  # the marker was filled


@pytest.mark.parametrize("page", pages.pages(), ids=pages.name)
def test_each_example_runs_or_says_why_not(page):
    assert not pages.skips_without_reason(page), 'write <!-- skip: next "why" --> before a block that cannot run'
    unknown = [lang for lang in pages.languages(page) if lang not in pages.RUN + pages.SHOWN]
    assert not unknown, f"blocks in {unknown}: write sh, python or r for what runs, text or console for what is shown"


@pytest.mark.parametrize("page", pages.pages(), ids=pages.name)
def test_a_screenshot_on_a_page_is_one_a_browser_test_keeps(page):
    for target in IMAGE.findall(page.read_text(encoding="utf-8")):
        image = (page.parent / target).resolve()
        assert image.parent == pages.DOCS / "screenshots", f"{target}: screenshots live in docs/screenshots"
        assert image.stem in SCREENSHOTS, f"{target}: no browser test keeps it (tests/support/docs_screens.py)"
        assert image.is_file(), f"{target}: run the browser test that keeps it"


def test_the_readme_is_short_and_sends_people_on():
    readme = (pages.ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 150
    assert "make run" in readme and "make test" in readme and "docs/" in readme


def test_the_sybil_parsers_find_every_runnable_block():
    """What the example test counts is what the page holds: a parser that missed a language would let its
    blocks go unrun."""
    for page in pages.pages():
        found = [e for e in pages.sybil(lambda e: None, lambda e: None).parse(page) if not isinstance(e.parsed, tuple)]
        assert len(found) == sum(lang in pages.RUN for lang in pages.languages(page)), pages.name(page)


def test_the_screenshots_named_are_taken_by_the_tests():
    """Each name in the list is one a browser test asks for, so the list cannot name a screen nobody takes."""
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (pages.ROOT / "tests" / "app" / "web").glob("test_*.py"))
    for name in SCREENSHOTS:
        screen, _, width = name.rpartition("-")
        assert f'"{screen}"' in tests and width in ("1280", "375"), name
