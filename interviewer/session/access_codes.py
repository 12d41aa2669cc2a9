"""Access codes people can read aloud, write down and type back: groups of four, no look-alikes.

The alphabet leaves out 0/O, 1/I/L and U/V, so a code copied by hand from a screen or a sheet of
paper comes back right; 28 characters of 29 kinds hold 136 random bits, more than a guessing
attacker could ever try against a stored hash.
"""

from __future__ import annotations

import re
import secrets

ALPHABET = "23456789ABCDEFGHJKMNPQRSTWXYZ"
GROUPS, GROUP_SIZE = 7, 4
_NOT_CODE = re.compile(r"[^0-9A-Z]")


def new_access_code() -> str:
    """A new random code in its printed form, e.g. ``7KQH-M3XA-...`` (seven groups of four)."""
    raw = "".join(secrets.choice(ALPHABET) for _ in range(GROUPS * GROUP_SIZE))
    return "-".join(raw[i : i + GROUP_SIZE] for i in range(0, len(raw), GROUP_SIZE))


def normalized(typed: str) -> str:
    """A code as typed (any case, spaces or dashes anywhere) in its printed form; other text unchanged."""
    letters = _NOT_CODE.sub("", typed.upper())
    if len(letters) != GROUPS * GROUP_SIZE or any(c not in ALPHABET for c in letters):
        return typed.strip()
    return "-".join(letters[i : i + GROUP_SIZE] for i in range(0, len(letters), GROUP_SIZE))
