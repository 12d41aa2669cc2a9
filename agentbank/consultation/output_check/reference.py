"""What one agent's answers are checked against: its turns indexed as shingles, windows, word chains and
places, the canary and the deny-list, in each view (``views``); and the coverage of those turns that
some texts reproduce.

Built once per check call from the participant's decrypted turns and never stored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from agentbank.consultation.output_check.canonical import canonical_tokens, fold
from agentbank.consultation.output_check.chains import TurnWords, marker_places
from agentbank.consultation.output_check.decoding import decoded_variants
from agentbank.consultation.output_check.positions import Places, Shown, shown
from agentbank.consultation.output_check.views import View, marker, readings, turn_words

SPAN_TOKENS = 12
SHINGLE_CHARS = 16  # about four words: shorter shared strings are common phrases, not quotes
CANARY_PIECE = 8
SPELLED_NAME = 10
CONSONANT_CHARS = 24  # a chain's letters in the consonant view: about three in five letters are consonants
CONSONANT_FREE = 2  # ... and a word's: "th", "fr" and "my" are words a chain must find
VERBATIM, CUMULATIVE, CANARY, DENY_LIST = "verbatim", "cumulative", "canary", "deny_list"
# Readings that keep the answer's word order, where a quote with filler words between its words is sought.
CHAIN_READINGS = ("text", "words-reversed", "rot13-text", "rot13-words-reversed", "symbols", "restored", "shifted")
# Readings whose words are the answer's words, in order or reversed, where places of the turns are sought.
PLACE_READINGS = (*CHAIN_READINGS, "word-order", "rot13-word-order")


def tokens(text: str) -> list[str]:
    """The normalized words of a text (see ``canonical``)."""
    return canonical_tokens(text)


@dataclass(frozen=True)
class _Turn:
    text: str  # canonical: letters and digits only
    bounds: tuple[tuple[int, int], ...]  # each word's start and end in ``text``


def _turn(words: list[str]) -> _Turn:
    bounds, position = [], 0
    for word in words:
        bounds.append((position, position + len(word)))
        position += len(word)
    return _Turn("".join(words), tuple(bounds))


def _chains(view: View, per_turn: list[list[str]]) -> TurnWords:
    # Without vowels a word is shorter: "the" is "th", and must still be found, not taken as filler.
    if view is View.LETTERS:
        return TurnWords.build(per_turn)
    return TurnWords.build(per_turn, min_chars=CONSONANT_CHARS, free=CONSONANT_FREE)


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
    places: Places
    vocabulary: frozenset[str]  # the turns' words as letters (folded): what guided readings aim at
    view: View = View.LETTERS
    consonants: Reference | None = None  # the same turns in the consonant view
    # What this check call has read of its answers already (each view, the stream and what was received
    # read the same answers again); it lives and dies with the reference, never beyond the call.
    memo: dict[tuple[str, str], Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, turns: Iterable[str], canary: str, deny_list: Iterable[str]) -> Reference:
        """Index each turn alone, so no span is counted across two turns; in both views."""
        texts = list(turns)
        letters = cls._view(View.LETTERS, texts, canary, deny_list)
        consonants = replace(cls._view(View.CONSONANTS, texts, canary, ()), memo=letters.memo)
        return replace(letters, consonants=consonants)

    @classmethod
    def _view(cls, view: View, texts: list[str], canary: str, deny_list: Iterable[str]) -> Reference:
        per_turn = [turn_words(view, t) for t in texts]
        prepared = tuple(_turn(words) for words in per_turn)
        shingles: dict[int, list[tuple[int, int]]] = defaultdict(list)
        windows: set[int] = set()
        for n, (turn, words) in enumerate(zip(prepared, per_turn, strict=True)):
            for i in range(len(turn.text) - SHINGLE_CHARS + 1):
                shingles[hash(turn.text[i : i + SHINGLE_CHARS])].append((n, i))
            said = [w for w in words if w]
            windows.update(window_key(said[i : i + SPAN_TOKENS]) for i in range(len(said) - SPAN_TOKENS + 1))
        entities = tuple(t for t in (tuple(fold(w) for w in canonical_tokens(e)) for e in deny_list) if t)
        vocabulary = frozenset(w for t in texts for w in turn_words(View.LETTERS, t))
        said = texts if view is View.LETTERS else [" ".join(filter(None, words)) for words in per_turn]
        places = Places.build(said)
        return cls(prepared, dict(shingles), frozenset(windows), marker(view, canary), entities,
                   _chains(view, per_turn), places, vocabulary, view)  # fmt: skip

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
        """Every (reading name, words) of the answer and of its decodings, in this view."""
        for decoded in self.decoded(answer):
            found = dict(self._read(decoded))
            if found.get("symbols") == found["text"]:
                del found["symbols"]  # nothing stood for a letter: the same words, checked once
            yield from found.items()

    def stream_readings(self, text: str) -> dict[str, list[str]]:
        """The readings of an answer as written, and of its last decoding ("decoded-"), for the stream of
        received answers: pieces as written line up in the first, encoded pieces in the second."""
        decoded = self.decoded(text)
        found = dict(self._read(decoded[0]))
        found.update((f"decoded-{n}", w) for n, w in self._read(decoded[-1]).items())
        return found

    def decoded(self, answer: str) -> list[str]:
        """The answer and its readable decodings (``decoding.decoded_variants``), read once per check call."""
        key = ("decoded", answer)
        if key not in self.memo:
            self.memo[key] = decoded_variants(answer)
        return list(self.memo[key])

    def _read(self, text: str) -> dict[str, list[str]]:
        key = (self.view.value, text)
        if key not in self.memo:
            self.memo[key] = readings(self.view, text, self.vocabulary)
        return self.memo[key]

    def shows(self, answer: str, found: list[tuple[str, list[str]]] | None = None) -> tuple[Shown, set[int]]:
        """The places of the turns and the characters of the marker an answer shows, in any order
        (``found``: its readings, when the caller has them already)."""
        found = found if found is not None else list(self.readings(answer))
        texts = self.decoded(answer) if self.view is View.LETTERS else []  # numbered words: as letters
        # Short pieces only as letters: without vowels, short words are too alike ("th", "t", "s").
        loose = CHAIN_READINGS if self.view is View.LETTERS else ()
        ordered = [(words, name in loose) for name, words in found if name in PLACE_READINGS]
        places = shown(self.places, ordered, texts)
        marker: set[int] = set()
        for _, words in found:
            marker |= marker_places(self.canary, words, self.vocabulary)
        return places, marker

    def coverage(self, texts: Iterable[str]) -> Coverage:
        """Which characters of which turns these texts reproduce, in any reading."""
        return self.coverage_of(words for text in texts for _, words in self.readings(text))

    def coverage_of(self, readings: Iterable[list[str]]) -> Coverage:
        """Which characters of which turns these readings (word lists) reproduce."""
        covered = Coverage()
        for words in readings:
            if words:
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
            bounds = reference.turns[n].bounds
            for k, (start, end) in enumerate([*bounds, (0, 0)]):
                # A word with no letters in the view (a vowel, as consonants) is inside a run it is in.
                if k < len(bounds) and (row.find(0, start, end) == -1 if end > start else bool(run)):
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
