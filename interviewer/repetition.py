"""Whether a follow-up says again what was already said: the question, the script, an earlier follow-up.

Small models asked to follow up often hand the scripted question back with a word changed, or read
out a sentence of the opening; either is caught before it is spoken and the interview moves on.
"""

from __future__ import annotations

import difflib
import re


def _normalized(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.casefold()).strip()


# A follow-up this close to something already said (by character alignment of the normalized text)
# repeats it: "Could you walk me through your life so far?" for the scripted "Could you walk me through
# your life so far, from your childhood up to today?" scores about 0.8; distinct questions stay under 0.5.
REPEAT_SIMILARITY = 0.75
# ...and one that quotes this many words of it in a row repeats it too, while "Why was that?" does not.
REPEAT_MIN_WORDS = 6


def repeats(candidate: str, said: list[str]) -> bool:
    """Whether ``candidate`` says again one of ``said`` (the question, the script's other text, earlier turns)."""
    mine = _normalized(candidate)
    if not mine:
        return True
    for other in said:
        theirs = _normalized(other)
        if not theirs:
            continue
        shorter, longer = sorted((mine, theirs), key=len)
        if len(shorter.split()) >= REPEAT_MIN_WORDS and f" {shorter} " in f" {longer} ":
            return True  # a whole clause lifted from the script, however long the rest
        if difflib.SequenceMatcher(None, mine, theirs, autojunk=False).ratio() >= REPEAT_SIMILARITY:
            return True
    return False
