"""Readings that undo word games and letter shifts, guided by the words the participant used.

A word game rewrites each word by a rule a reader undoes at a glance: pig Latin ("elephant" is
``elephantway``, "passphrase" ``assphrasepay``), ubbi dubbi ("hubellubo"), a word's letters rotated;
a letter shift (Caesar, Atbash) rewrites every letter. Undoing them is ambiguous word by word (how
many consonants moved?), so each candidate is kept only where it is a word of the participant's turns
(``vocabulary``, folded as the check folds): that is what a leak has to be made of, and an honest word
that is none of them stays as written.

``skeleton`` drops the vowels: the check compares a second view of the turns with their vowels dropped
(``reference``), so "mdnght ndr th brdg" reads as the turn it was cut from, whichever vowels went.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator, Set
from functools import cache

from agentbank.consultation.output_check.canonical import fold

VOWELS = frozenset("aeiou")
MIN_GUIDED = 4  # words a shift must turn into the participant's words before it is believed
_UBBI = re.compile(r"ub(?=[aeiouy])")


def skeleton(word: str) -> str:
    """The word without its vowels (folded text: ``l`` and ``1`` have become ``i`` and go too)."""
    return "".join(ch for ch in word if ch not in VOWELS)


def _undone(word: str) -> Iterator[str]:
    """Every way a word game may have made ``word``, most likely first."""
    if len(word) >= 4 and word.endswith("ay"):
        core = word[:-2]
        yield core  # a vowel-initial word with "ay"
        if core[-1:] in ("w", "y", "h"):
            yield core[:-1]  # ... with "way", "yay" or "hay"
        for moved in range(1, min(4, len(core) - 1) + 1):
            yield core[-moved:] + core[:-moved]  # the initial consonants moved behind, then "ay"
    if "ub" in word:
        yield _UBBI.sub("", word)
    if len(word) >= 4:
        for moved in range(1, 3):
            yield word[moved:] + word[:moved]  # letters moved from the front to the back
            yield word[-moved:] + word[:-moved]


def restored(words: list[str], vocabulary: Set[str]) -> list[str] | None:
    """The words with each game undone where that gives a word of the turns; None when nothing changed."""
    out, changed = [], False
    for word in words:
        if word not in vocabulary:
            found = next((w for w in _undone(word) if w in vocabulary), None)
            if found is not None:
                word, changed = found, True
        out.append(word)
    return out if changed else None


@cache
def _shift_tables() -> tuple[tuple[str, dict[int, int]], ...]:
    letters = string.ascii_lowercase
    tables = [(f"shift-{k}", str.maketrans(letters, letters[k:] + letters[:k])) for k in range(1, 26) if k != 13]
    return (*tables, ("atbash", str.maketrans(letters, letters[::-1])))


def shifted(words: list[str], vocabulary: Set[str]) -> tuple[str, list[str]] | None:
    """The letter shift (rot13 aside, it is a reading of its own) that turns the most words of three or
    more letters into the participant's words, with the words shifted and folded; None when none turns
    enough. ``words`` are canonical but not folded: a shift moves ``l`` elsewhere, folding does not."""
    eligible = [w for w in words if len(w) >= 3 and w.isalpha()]
    if len(eligible) < MIN_GUIDED:
        return None
    best: tuple[int, str, dict[int, int]] | None = None
    for name, table in _shift_tables():
        hits = sum(fold(w.translate(table)) in vocabulary for w in eligible)
        if hits >= MIN_GUIDED and hits * 2 >= len(eligible) and (best is None or hits > best[0]):
            best = (hits, name, table)
    if best is None:
        return None
    return best[1], [fold(w.translate(best[2])) for w in words]


def marker_shifts(joined: str) -> Iterator[str]:
    """``joined`` (canonical, not folded) under every letter shift, and with ubbi dubbi undone, folded:
    where the marker may hide (random characters have no vocabulary to guide a choice, and a substring
    test is cheap)."""
    for _, table in _shift_tables():
        yield fold(joined.translate(table))
    yield fold(_UBBI.sub("", joined))
