"""Text that PostgreSQL can store: the field type of every request body and of domain requests."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator


def storable(value: str) -> bool:
    """Whether PostgreSQL can store the text: no NUL, and valid Unicode (no lone UTF-16 surrogate)."""
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _storable(value: str) -> str:
    # Refuse here as a 422 what would otherwise fail in the database as a 500.
    if not storable(value):
        raise ValueError("must be valid Unicode text without NUL characters")
    return value


Text = Annotated[str, AfterValidator(_storable)]
