"""What one agent's answers are checked against: its turns indexed as shingles, windows and word chains,
the canary and the deny-list; and the coverage of those turns that some texts reproduce.

Built once per check call from the participant's decrypted turns and never stored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from agentbank.output_check.canonical import canonical, canonical_tokens, variants
from agentbank.output_check.chains import TurnWords
from agentbank.output_check.decoding import decoded_variants

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
