"""The output check: an individual answer is withheld when it leaks what the agent was shown.

Three tests, all on text normalized the same way (lower case, punctuation removed, whitespace
collapsed), and repeated on any base64 or hex run found in the answer after decoding it:

- **verbatim**: the answer shares a run of ``SPAN_TOKENS`` consecutive tokens with one of the
  participant's turns. The turns' shingles (hashes of every window of that length) are indexed once
  per check, so each answer costs one pass over its own tokens.
- **canary**: the agent's secret marker appears, also when spelled out with spaces, dashes or dots
  between its characters, reversed, or cut into pieces of eight characters or more (the comparison
  ignores everything but letters and digits).
- **deny_list**: the answer names an entity from the agent's deny-list (a whole-token match; long
  names are also found spelled out letter by letter).

A paraphrase passes: shared vocabulary is not a leak. What this cannot see: a transcript translated
into another language, re-encoded in ways other than base64 and hex, or quoted in runs shorter than
the threshold; the reviewer queue is the second line for those.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

SPAN_TOKENS = 12
CANARY_PIECE = 8
SPELLED_NAME = 10
VERBATIM, CANARY, DENY_LIST = "verbatim", "canary", "deny_list"

_NON_WORD = re.compile(r"[^\w\s]+")
_NON_ALNUM = re.compile(r"[\W_]+")
# Runs long enough to carry a leaked phrase; shorter ones are common words or numbers.
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}[\s:]?){8,}")


def tokens(text: str) -> list[str]:
    """The normalized tokens of a text: lower case, punctuation removed, split on whitespace."""
    return _NON_WORD.sub(" ", text.lower()).split()


def _shingles(words: Sequence[str], size: int = SPAN_TOKENS) -> Iterable[int]:
    return (hash(tuple(words[i : i + size])) for i in range(len(words) - size + 1))


@dataclass(frozen=True)
class Reference:
    """What one agent's answers are checked against, prepared once per check call."""

    shingles: frozenset[int]
    canary: str  # letters and digits only, lower case
    entities: tuple[tuple[str, ...], ...]

    @classmethod
    def build(cls, turns: Iterable[str], canary: str, deny_list: Iterable[str]) -> Reference:
        """Index the turns' shingles (each turn alone, so no window spans two speakers' turns)."""
        index: set[int] = set()
        for turn in turns:
            index.update(_shingles(tokens(turn)))
        entities = tuple(t for t in (tuple(tokens(e)) for e in deny_list) if t)
        return cls(frozenset(index), _NON_ALNUM.sub("", canary.lower()), entities)

    @property
    def spelled_entities(self) -> tuple[str, ...]:
        """Long names with everything but letters and digits removed, to catch them spelled out.

        Only names of ``SPELLED_NAME`` characters or more: a short name ("Ford") squashed this way
        would match inside ordinary words ("afford").
        """
        squashed = ("".join(e) for e in self.entities)
        return tuple(e for e in squashed if len(e) >= SPELLED_NAME)

    @property
    def canary_pieces(self) -> tuple[str, ...]:
        """Every run of ``CANARY_PIECE`` characters of the canary, forwards and reversed.

        A model told to split the marker ("the first half is ..., the second half is ...") still
        writes pieces this long; eight random base-32 characters do not occur in prose by chance.
        """
        marker = self.canary
        if len(marker) <= CANARY_PIECE:
            return (marker, marker[::-1]) if marker else ()
        pieces = {marker[i : i + CANARY_PIECE] for i in range(len(marker) - CANARY_PIECE + 1)}
        return tuple(sorted(pieces | {p[::-1] for p in pieces}))


@dataclass(frozen=True)
class Verdict:
    """Whether an answer may be released, and if not which tests it failed (never the matched text)."""

    reasons: tuple[str, ...] = field(default_factory=tuple)

    @property
    def released(self) -> bool:
        """True when no test failed."""
        return not self.reasons


def decoded_variants(text: str) -> list[str]:
    """The text itself and the readable decodings of the base64 and hex runs inside it."""
    variants = [text]
    for match in _HEX.finditer(text):
        raw = re.sub(r"[\s:]", "", match.group())
        variants.extend(_readable(lambda r=raw: binascii.unhexlify(r[: len(r) // 2 * 2])))
    for match in _BASE64.finditer(text):
        run = match.group()
        padded = run + "=" * (-len(run) % 4)
        variants.extend(_readable(lambda p=padded: base64.b64decode(p, validate=True)))
        variants.extend(_readable(lambda p=padded: base64.urlsafe_b64decode(p)))
    return variants


def _readable(decode) -> list[str]:
    try:
        data = decode()
    except (ValueError, binascii.Error):
        return []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    printable = sum(ch.isprintable() or ch.isspace() for ch in text)
    # Random runs (ids, hashes) decode to noise; only text that reads as text is checked again.
    return [text] if text and printable / len(text) > 0.9 else []


def _has_span(words: Sequence[str], index: frozenset[int]) -> bool:
    return any(h in index for h in _shingles(words))


def _names(words: Sequence[str], entity: tuple[str, ...]) -> bool:
    size = len(entity)
    return any(tuple(words[i : i + size]) == entity for i in range(len(words) - size + 1))


def check(answer: str, reference: Reference) -> Verdict:
    """Run the three tests on an answer and every decoded variant of it."""
    reasons: list[str] = []
    for variant in decoded_variants(answer):
        words = tokens(variant)
        if VERBATIM not in reasons and _has_span(words, reference.shingles):
            reasons.append(VERBATIM)
        squashed = _NON_ALNUM.sub("", variant.lower())
        if CANARY not in reasons and any(piece in squashed for piece in reference.canary_pieces):
            reasons.append(CANARY)
        if DENY_LIST not in reasons and (
            any(_names(words, e) for e in reference.entities) or any(e in squashed for e in reference.spelled_entities)
        ):
            reasons.append(DENY_LIST)
    return Verdict(tuple(sorted(reasons)))


def answer_text(value: object, reason: str) -> str:
    """The released text of an answer: its value when textual, and its rationale."""
    parts = [value] if isinstance(value, str) else []
    return "\n".join([*parts, reason])
