"""The two views in which the check compares an answer with the turns: as letters, and as consonants.

- ``LETTERS``: the turns' canonical words, folded (``canonical.fold``); an answer read every way
  ``canonical.variants`` undoes, and the ways guided by the participant's own words (``games``: word
  games undone, a letter shift).
- ``CONSONANTS``: the same words with their vowels dropped, on both sides. A turn written without its
  vowels ("mdnght ndr th brdg"), or with only some of them, reads here as the turn it came from, while
  an honest answer's consonants still spell other words.

Each view is a full reference (shingles, windows, chains, places), so every test of the check runs in
both; the consonant view reads only the plain text, its symbols and its undone games.
"""

from __future__ import annotations

from collections.abc import Set
from enum import StrEnum

from agentbank.consultation.output_check.canonical import canonical, canonical_tokens, fold, variants
from agentbank.consultation.output_check.games import restored, shifted, skeleton


class View(StrEnum):
    LETTERS = "letters"
    CONSONANTS = "consonants"


def turn_words(view: View, text: str) -> list[str]:
    """A turn's words as the view compares them (in the consonant view some may be empty)."""
    words = [fold(w) for w in canonical_tokens(text)]
    # A word of vowels only ("a", "I") keeps its place, empty: a span counts the words a reader counts.
    return words if view is View.LETTERS else [skeleton(w) for w in words]


def marker(view: View, canary: str) -> str:
    """The agent's marker as the view compares it."""
    folded = fold(canonical(canary))
    return folded if view is View.LETTERS else skeleton(folded)


def readings(view: View, text: str, vocabulary: Set[str]) -> dict[str, list[str]]:
    """Every reading of one text (not its decodings) in the view: a name for each, and its words."""
    found = dict(variants(text))
    if (games := restored(found["text"], vocabulary)) is not None:
        found["restored"] = games
    if view is View.CONSONANTS:
        kept = {name: found[name] for name in ("text", "symbols", "restored") if name in found}
        return {name: [s for s in map(skeleton, words) if s] for name, words in kept.items()}
    if (shift := shifted(canonical_tokens(text), vocabulary)) is not None:
        found["shifted"] = shift[1]
    return found
