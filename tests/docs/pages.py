"""The documentation's pages and their examples, as the tests read them (Sybil parses the Markdown)."""

from __future__ import annotations

import re
from pathlib import Path

from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# Fenced blocks in these languages run; any other language is shown only (output, configuration, JSON).
RUN = ("sh", "python", "r")
SHOWN = ("text", "console", "json", "yaml", "ini", "toml", "html", "csv", "nginx", "dockerfile", "jsonl")
FENCE = re.compile(r"^\s*```\s*([A-Za-z0-9_+-]*)", re.MULTILINE)
SKIP = re.compile(r"<!--\s*skip:\s*(\w+)(.*?)-->")


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def name(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


def languages(page: Path) -> list[str]:
    """The language of every fenced block's opening fence on the page."""
    fences = FENCE.findall(page.read_text(encoding="utf-8"))
    return fences[0::2]  # every other fence closes a block


def runs_examples(page: Path) -> bool:
    return any(language in RUN for language in languages(page))


def skips_without_reason(page: Path) -> list[str]:
    """Each skip of a next example that does not say why (``<!-- skip: next "why" -->``)."""
    found = SKIP.findall(page.read_text(encoding="utf-8"))
    return [f"skip: {action}" for action, why in found if action == "next" and not why.strip().startswith('"')]


def sybil(shell, r) -> Sybil:
    """The parsers of a page: skips, Python blocks (one namespace per page), shell and R blocks."""
    return Sybil(
        parsers=[
            SkipParser(),
            PythonCodeBlockParser(),
            CodeBlockParser(language="sh", evaluator=shell),
            CodeBlockParser(language="r", evaluator=r),
        ]
    )
