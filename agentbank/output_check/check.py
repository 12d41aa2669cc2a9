"""The output check: an individual answer is withheld when it leaks what the agent was shown.

Every test runs on the canonical form of the answer (``canonical``: compatibility forms and look-alike
letters folded to Latin, marks and zero-width characters dropped, case folded, nothing but letters and
digits), on the readings that undo reversal, rot13 and filler letters, and on every readable decoding
of encoded runs inside it (``decoding``: base64, base32, hex, URL and HTML escapes, binary, JSON):

- **verbatim**: the answer covers ``SPAN_TOKENS`` consecutive words of one of the participant's turns.
  Coverage is measured with character shingles (every ``SHINGLE_CHARS`` characters of a turn's
  canonical form), so spaces, dots or underscores between or inside words change nothing; the same
  words in another order (reversed, shuffled within a span) are caught by comparing sorted windows.
  A quote with filler words between its words (each within ``chains.GAP`` words of the last) is a span too.
- **cumulative**: the same, over everything the project has already received from this agent plus
  this answer, so a turn asked for in pieces shorter than the span is stopped at the piece that would
  complete a span (``received.Received``): pieces of any length in any order as coverage, and the
  received answers read in order as one text, so pieces shorter than a shingle (a word or a few
  letters per answer, bare or wrapped in a sentence) line up again.
- **canary**: any ``CANARY_PIECE`` characters of the agent's secret marker, in any reading, also
  in pieces of a few characters with other words between them (``chains.scan_marker``), within an
  answer and across the answers received in order.
- **deny_list**: an entity of the agent's deny-list as whole words, or a long one spelled out.

A paraphrase passes: shared vocabulary is not a leak. What this cannot see: a transcript translated
into another language, paraphrased closely, or encoded in ways not listed; pieces shorter than a
shingle handed out out of order (word 17, then word 3...), with more than ``chains.GAP`` words of
filler between them, or in single characters wrapped in sentences: a bag of single words in any
order is what honest answers in the participant's voice also give. Quotas and the reviewer queue
are the second line for those.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentbank.output_check.canonical import canonical, canonical_tokens, variants
from agentbank.output_check.chains import TurnWords, scan, scan_marker
from agentbank.output_check.decoding import decoded_variants

if TYPE_CHECKING:
    from agentbank.output_check.received import Received

SPAN_TOKENS = 12
SHINGLE_CHARS = 16  # about four words: shorter shared strings are common phrases, not quotes
CANARY_PIECE = 8
SPELLED_NAME = 10
VERBATIM, CUMULATIVE, CANARY, DENY_LIST = "verbatim", "cumulative", "canary", "deny_list"
# Readings that keep the answer's word order, where a quote with filler words between its words is sought.
CHAIN_READINGS = ("text", "words-reversed", "rot13-text", "rot13-words-reversed")


def tokens(text: str) -> list[str]:
    """The normalized words of a text (see ``canonical``)."""
    return canonical_tokens(text)


@dataclass(frozen=True)
class _Turn:
    text: str  # canonical: letters and digits only
    bounds: tuple[tuple[int, int], ...]  # each word's start and end in ``text``


def _turn(text: str) -> _Turn:
    bounds, position = [], 0
    for word in canonical_tokens(text):
        bounds.append((position, position + len(word)))
        position += len(word)
    return _Turn(canonical(text), tuple(bounds))


def window_key(words: Iterable[str]) -> int:
    """A window of words as the check compares it: the same words in any order give the same key."""
    return hash(tuple(sorted(words)))


@dataclass(frozen=True)
class Reference:
    """What one agent's answers are checked against, prepared once per check call (never stored)."""

    turns: tuple[_Turn, ...]
    shingles: dict[int, list[tuple[int, int]]]  # hash of a shingle -> (turn, offset) where it occurs
    windows: frozenset[int]  # every SPAN_TOKENS-word window of a turn, its words sorted
    canary: str
    entities: tuple[tuple[str, ...], ...]
    words: TurnWords

    @classmethod
    def build(cls, turns: Iterable[str], canary: str, deny_list: Iterable[str]) -> Reference:
        """Index each turn alone, so no span is counted across two turns."""
        prepared = tuple(_turn(t) for t in turns)
        shingles: dict[int, list[tuple[int, int]]] = defaultdict(list)
        windows: set[int] = set()
        for n, turn in enumerate(prepared):
            for i in range(len(turn.text) - SHINGLE_CHARS + 1):
                shingles[hash(turn.text[i : i + SHINGLE_CHARS])].append((n, i))
            words = [turn.text[a:b] for a, b in turn.bounds]
            windows.update(window_key(words[i : i + SPAN_TOKENS]) for i in range(len(words) - SPAN_TOKENS + 1))
        entities = tuple(t for t in (tuple(canonical_tokens(e)) for e in deny_list) if t)
        turn_words = TurnWords.build(canonical_tokens(t) for t in turns)
        return cls(prepared, dict(shingles), frozenset(windows), canonical(canary), entities, turn_words)

    @property
    def spelled_entities(self) -> tuple[str, ...]:
        """Long names squashed to letters and digits (a short one, "Ford", would match "afford")."""
        return tuple(s for s in ("".join(e) for e in self.entities) if len(s) >= SPELLED_NAME)

    @property
    def canary_pieces(self) -> tuple[str, ...]:
        """Every run of ``CANARY_PIECE`` characters of the canary (eight random characters never
        occur in prose by chance, so a marker handed out in halves is still caught)."""
        marker = self.canary
        if len(marker) <= CANARY_PIECE:
            return (marker,) if marker else ()
        return tuple(sorted({marker[i : i + CANARY_PIECE] for i in range(len(marker) - CANARY_PIECE + 1)}))

    def readings(self, answer: str) -> Iterator[tuple[str, list[str]]]:
        """Every (reading name, canonical words) of the answer and of its decodings."""
        for decoded in decoded_variants(answer):
            yield from variants(decoded)

    def coverage(self, texts: Iterable[str]) -> Coverage:
        """Which characters of which turns these texts reproduce, in any reading."""
        covered = Coverage()
        for text in texts:
            for _, words in self.readings(text):
                joined = "".join(words)
                for i in range(len(joined) - SHINGLE_CHARS + 1):
                    for n, offset in self.shingles.get(hash(joined[i : i + SHINGLE_CHARS]), ()):
                        covered.mark(n, len(self.turns[n].text), offset, offset + SHINGLE_CHARS)
        return covered


@dataclass
class Coverage:
    """Covered characters per turn (one byte per character, 1 when some text reproduced it)."""

    marks: dict[int, bytearray] = field(default_factory=dict)

    def mark(self, turn: int, length: int, start: int, end: int) -> None:
        """Mark characters ``start:end`` of a turn as reproduced."""
        row = self.marks.setdefault(turn, bytearray(length))
        row[start:end] = b"\x01" * (end - start)

    def union(self, other: Coverage) -> Coverage:
        """The characters covered by either."""
        merged = Coverage({n: bytearray(row) for n, row in self.marks.items()})
        for n, row in other.marks.items():
            mine = merged.marks.setdefault(n, bytearray(len(row)))
            merged.marks[n] = bytearray(a | b for a, b in zip(mine, row, strict=True))
        return merged

    def spans(self, reference: Reference) -> Iterator[tuple[int, int, int]]:
        """(turn, first char, end char) of every run of ``SPAN_TOKENS`` or more wholly covered words."""
        for n, row in self.marks.items():
            run: list[tuple[int, int]] = []
            for start, end in [*reference.turns[n].bounds, (0, 0)]:
                if end > start and row.find(0, start, end) == -1:
                    run.append((start, end))
                    continue
                # A word of one or two letters at either end may be matched by chance (the text
                # after a quote happens to begin with "a"), so it does not lengthen a run.
                while run and run[0][1] - run[0][0] < 3:
                    run.pop(0)
                while run and run[-1][1] - run[-1][0] < 3:
                    run.pop()
                if len(run) >= SPAN_TOKENS:
                    yield n, run[0][0], run[-1][1]
                run = []


@dataclass(frozen=True)
class Verdict:
    """Whether an answer may be released, and if not which tests it failed (never the matched text)."""

    reasons: tuple[str, ...] = field(default_factory=tuple)

    @property
    def released(self) -> bool:
        """True when no test failed."""
        return not self.reasons


def check(answer: str, reference: Reference, received: Received | None = None) -> Verdict:
    """Run the tests on every reading of an answer; with ``received``, also against what the project has."""
    reasons: set[str] = set()
    spelled, pieces = reference.spelled_entities, reference.canary_pieces
    for name, words in reference.readings(answer):
        joined = "".join(words)
        if any(piece in joined for piece in pieces) or (
            reference.canary and scan_marker(reference.canary, words, (), 0, CANARY_PIECE)[2]
        ):
            reasons.add(CANARY)  # the marker whole, or in pieces with other words between them
        if any(e in joined for e in spelled) or (name in ("text", "rot13-text") and _names(words, reference)):
            reasons.add(DENY_LIST)
        windows = (window_key(words[i : i + SPAN_TOKENS]) for i in range(len(words) - SPAN_TOKENS + 1))
        if any(w in reference.windows for w in windows):
            reasons.add(VERBATIM)
        if name in CHAIN_READINGS and scan(reference.words, words, {}, 0, SPAN_TOKENS)[1]:
            reasons.add(VERBATIM)  # a quote with filler words between its words
    covered = reference.coverage([answer])
    if any(covered.spans(reference)):
        reasons.add(VERBATIM)
    elif received is not None and VERBATIM not in reasons:
        reasons.update(received.assess(answer, covered))
    return Verdict(tuple(sorted(reasons)))


def _names(words: list[str], reference: Reference) -> bool:
    for entity in reference.entities:
        size = len(entity)
        if any(tuple(words[i : i + size]) == entity for i in range(len(words) - size + 1)):
            return True
    return False


def answer_text(value: object, reason: str) -> str:
    """The released text of an answer: its value when textual, and its rationale."""
    parts = [value] if isinstance(value, str) else []
    return "\n".join([*parts, reason])
