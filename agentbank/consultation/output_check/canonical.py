"""The canonical form the output check compares on, so that spelling tricks do not hide a quote.

``canonical_tokens`` turns a text into the words a reader would see, with every visual disguise removed:

1. NFKD: compatibility forms (fullwidth, mathematical bold, ligatures, superscripts) become plain
   letters, and accents split off as combining marks;
2. combining marks (accents, "zalgo" stacks) and format characters (zero-width spaces and joiners,
   soft hyphens, bidi controls) are dropped, so a mark inside a word does not split it;
3. characters that look like a Latin letter or digit (Cyrillic ``а``, Greek ``ο``...) become that letter,
   from Unicode's confusables table (TR39) as shipped by ``confusable-homoglyphs``;
4. case is folded, and every run of anything but letters and digits is a word break.

``canonical`` is the same words joined without breaks: separators, spacing, underscores and
letter-by-letter spelling all vanish in it. ``variants`` adds the undoings of cheap reversible
rewrites: reversed characters, reversed word order, each word reversed, rot13, every other
character (one filler letter after each real one), symbols standing for letters (``p@$$``), and the
first letters of the words (a spelling alphabet: "Kilo Seven Quebec" is ``k7q``).

Every reading ends ``fold``-ed: the digits leetspeak writes for letters (4 a, 3 e, 1 i or l, 0 o,
5 s, 7 t...) and ``l`` become one letter each. The turns are folded the same way, so a number in a
turn still matches itself, and ``w1ll``, ``wi11`` and ``will`` read alike.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections.abc import Iterator
from functools import cache

from confusable_homoglyphs import confusables

# Combining marks and format characters carry no letter of their own.
_DROPPED_CATEGORIES = frozenset({"Mn", "Me", "Cf"})


@cache
def _fold_table() -> dict[int, str]:
    """Every non-ASCII character confusable with an ASCII letter or digit, mapped to that character.

    Built once from the TR39 data. A character confusable with several (``І`` with ``I``, ``l`` and
    ``1``) goes to the first in a fixed order; both sides of a comparison are folded by the same
    table, so the choice only has to be consistent.
    """
    table: dict[int, str] = {}
    targets = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    for target in targets:
        for entry in confusables.confusables_data.get(target, []):
            char = entry["c"]
            if len(char) == 1 and not char.isascii():
                table.setdefault(ord(char), target.lower())
    return table


def canonical_tokens(text: str) -> list[str]:
    """The words of ``text`` in canonical form: decomposed, unmarked, Latin-folded, case-folded."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(ch for ch in decomposed if unicodedata.category(ch) not in _DROPPED_CATEGORIES)
    folded = kept.translate(_fold_table()).casefold()
    # casefold can reintroduce compatibility forms (e.g. "ß" -> "ss" is fine, but "ﬅ" needs NFKC).
    folded = unicodedata.normalize("NFKC", folded)
    words: list[str] = []
    current: list[str] = []
    for ch in folded:
        if ch.isalnum():
            current.append(ch)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return words


# Leetspeak's digits for letters, and the letters they stand for, one letter per class ("1" for "i"
# or "l": both become "i"). Applied to both sides of every comparison, so nothing is lost but a few letters' difference.
_FOLD = str.maketrans({"0": "o", "1": "i", "l": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "9": "g",
                       "6": "g", "2": "z"})  # fmt: skip
# Symbols that stand for letters next to a letter or digit ("p@$$w0rd", "h!gh"), or two or more together ("!$").
_SYMBOLS = {"@": "a", "$": "s", "!": "i", "|": "i", "+": "t", "€": "e"}
_SYMBOL = re.compile(r"(?<=[^\W_])[@$!|+€]+|[@$!|+€]+(?=[^\W_])|[@$!|+€]{2,}")
# Spelling alphabets (NATO, police, "A for apple") keep a word's first letter; digits are spelled as words.
_DIGIT_WORDS = {"zero": "0", "one": "1", "two": "2", "three": "3", "tree": "3", "four": "4", "fower": "4",
                "five": "5", "fife": "5", "six": "6", "seven": "7", "eight": "8", "ait": "8", "nine": "9",
                "niner": "9"}  # fmt: skip
_SPELLING_BREAKS = frozenset({"space", "stop", "break", "dash"})


def fold(word: str) -> str:
    """A canonical word with leetspeak's digits and their look-alike letters folded (see the module)."""
    return word.translate(_FOLD)


def key_form(text: str) -> str:
    """A text's letters and digits as every comparison of the check sees them: canonical, then folded."""
    return fold(canonical(text))


def _symbols(text: str) -> str:
    return _SYMBOL.sub(lambda m: "".join(_SYMBOLS[c] for c in m.group()), text)


def _spelled(text: str) -> str:
    """The first letter of each word, digits spelled as words read as digits: a spelling alphabet read back."""
    letters = []
    for word in canonical_tokens(re.sub(r"(?i)\bx-ray\b", "xray", text)):
        if word in _SPELLING_BREAKS:
            continue
        letters.append(_DIGIT_WORDS.get(word, word if word.isdigit() else word[0]))
    return "".join(letters)


def canonical(text: str) -> str:
    """Letters and digits only, in canonical form: what is left once every separator is gone."""
    return "".join(canonical_tokens(text))


def rot13(text: str) -> str:
    """ROT13 of the ASCII letters (the canonical form is ASCII wherever the transcript is Latin)."""
    return codecs.encode(text, "rot13")


def variants(text: str) -> Iterator[tuple[str, list[str]]]:
    """Candidate readings of ``text``: (a name, its canonical words), the text as written first.

    Each undoes a rewrite a model can apply while leaking: reversed characters, reversed word order,
    each word reversed, rot13 of all of these, every other character (the canary or a quote with
    a filler letter after each character), symbols for letters and a spelling alphabet. Readings of
    ordinary prose are noise and match nothing. Every reading's words are folded (``fold``).
    """
    words = canonical_tokens(text)
    joined = "".join(words)
    readings = {
        "text": words,
        "reversed": [w[::-1] for w in reversed(words)],
        "word-order": list(reversed(words)),
        "words-reversed": [w[::-1] for w in words],
    }
    for name, reading in list(readings.items()):
        readings[f"rot13-{name}"] = [rot13(w) for w in reading]
    # Stride two keeps no word boundary; the joined string is one "word".
    readings["odd"], readings["even"] = [joined[0::2]], [joined[1::2]]
    readings["odd-reversed"], readings["even-reversed"] = [joined[::-1][0::2]], [joined[::-1][1::2]]
    readings["symbols"] = canonical_tokens(_symbols(text))  # as the text when it has none: a stream stays whole
    readings["spelled"] = [_spelled(text)]
    for name, reading in readings.items():
        yield name, [fold(w) for w in reading]
