"""The documentation site's build hook: reference pages are drawn from the code as the site is built."""

from __future__ import annotations

from typing import Any

from app.reference import expand


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return expand(markdown)
