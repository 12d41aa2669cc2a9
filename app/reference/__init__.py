"""Reference pages drawn from the code, never written twice: the documentation's pages hold a marker
(``<!-- reference: commands -->``) that the site's build replaces with what the code itself says: the
command line's commands and options, the settings with their defaults and meanings, the HTTP API from its
OpenAPI document and the database's classification of every column."""

from __future__ import annotations

import re
from collections.abc import Callable

from app.reference import api, commands, inventory, settings

PAGES: dict[str, Callable[[], str]] = {
    "commands": commands.markdown,
    "settings": settings.markdown,
    "api": api.markdown,
    "inventory": inventory.markdown,
}
MARKER = re.compile(r"<!-- reference: ([a-z]+) -->")


def expand(page: str) -> str:
    """The page with each marker replaced by its reference; an unknown name fails the build."""

    def replace(found: re.Match[str]) -> str:
        name = found.group(1)
        if name not in PAGES:
            raise KeyError(f"no reference named {name!r}; known: {', '.join(sorted(PAGES))}")
        return PAGES[name]()

    return MARKER.sub(replace, page)


def cell(text: str | None) -> str:
    """Text as one cell of a Markdown table: on one line, its pipes escaped."""
    return " ".join((text or "").split()).replace("|", "\\|")
