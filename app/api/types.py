"""Field types shared by request bodies."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator


def _no_nul(value: str) -> str:
    # PostgreSQL text cannot hold NUL; refuse it here as a 422 rather than fail in the database.
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


Text = Annotated[str, AfterValidator(_no_nul)]
