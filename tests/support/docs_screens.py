"""The browser tests' screenshots the documentation shows: each is kept in ``docs/screenshots`` by the test
that takes it (the whole page at that width, in 64 colours: text and flat colours lose nothing a reader sees, and
the file is about half the size), so a page always shows the screen as the code draws it."""

from __future__ import annotations

import io
from pathlib import Path

DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

# name-width, as check_screen names its screenshots.
SCREENSHOTS = frozenset({
    "front-released-1280",
    "explore-weighted-by-sex-1280", "explore-weighted-by-sex-375",
    "projects-console-1280", "projects-job-done-1280", "review-console-1280",
    "interview-consent-1280", "interview-talk-375", "interview-review-1280", "survey-intro-375",
    "portal-uses-1280", "portal-withdraw-confirm-375", "portal-proofs-1280",
    "studies-console-1280", "survey-reminder-375",
    "focus-group-live-1280", "interview-reflect-back-375",
})  # fmt: skip


def keep_for_docs(page, name: str) -> None:
    """Keep the page as it looks now in the documentation's screenshots, if a page shows it."""
    if name in SCREENSHOTS:
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        from PIL import Image

        shot = Image.open(io.BytesIO(page.screenshot(full_page=True))).convert("RGB")
        shot.quantize(colors=64).save(DOCS_SCREENSHOTS / f"{name}.png", optimize=True)
