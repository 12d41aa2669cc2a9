"""Runs of a turn's consecutive words found in order in a stream of words, with a little filler between.

Character shingles need a piece of text at least a shingle long. A quote can also be handed out with
other words between its words: a filler word after each word, or one word per answer, each wrapped in
a sentence ("Word 7 is elephant."), across many answers. Read in order, the stream of words still
holds the turn's words one after another, each within ``GAP`` words of the last. ``scan`` finds such
runs incrementally, so a stream of received answers is scanned once and each new answer continues it.

Words shorter than ``FREE`` letters ("a", "my", "is") need not appear: they would match by chance
anyway, and leaving them out of a piece hides nothing. A run counts when it covers ``span`` turn words
and at least ``MIN_CHARS`` letters, so a string of short common words is never enough.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping, Set
from dataclasses import dataclass

GAP = 12  # other words allowed between two consecutive words of a turn
FREE = 3  # turn words shorter than this may be missing
MIN_CHARS = 40


@dataclass(frozen=True)
class TurnWords:
    """The turns' canonical words, indexed by word, with each word's required predecessor."""

    words: tuple[tuple[str, ...], ...]
    index: dict[str, tuple[tuple[int, int], ...]]  # word -> (turn, position) of each required occurrence
    previous: dict[tuple[int, int], int]  # (turn, position) -> position of the required word before it
    widest: int  # the most turn words from one required word to the next
    min_chars: int = MIN_CHARS  # letters a run must hold (fewer where the words are consonants only)

    @classmethod
    def build(cls, turns: Iterable[Iterable[str]], min_chars: int = MIN_CHARS, free: int = FREE) -> TurnWords:
        """Index every word of at least ``free`` letters of each turn."""
        words = tuple(tuple(t) for t in turns)
        index: dict[str, list[tuple[int, int]]] = {}
        previous: dict[tuple[int, int], int] = {}
        for n, turn in enumerate(words):
            last = -1
            for i, word in enumerate(turn):
                if len(word) < free:
                    continue
                index.setdefault(word, []).append((n, i))
                previous[(n, i)] = last
                last = i
        widest = max((i - j for (_, i), j in previous.items()), default=1)
        return cls(words, {w: tuple(p) for w, p in index.items()}, previous, widest, min_chars)

    def letters(self, turn: int, first: int, last: int) -> int:
        """Letters and digits in words ``first`` to ``last`` of a turn."""
        return sum(len(w) for w in self.words[turn][first : last + 1])


@dataclass(frozen=True)
class RunEnd:
    """A run of a turn's words seen so far, by where its last word is."""

    position: int  # where in the stream the run's last word was seen
    start: int  # the run's first turn word
    old: bool  # the run was already long enough before the words being scanned


# (turn, position of the run's last word) -> the runs ending there, newest last
Ends = MutableMapping[tuple[int, int], tuple[RunEnd, ...]]
EndsDict = dict[tuple[int, int], tuple[RunEnd, ...]]


def scan(
    turns: TurnWords, words: Iterable[str], ends: Ends, position: int, span: int
) -> tuple[int, list[tuple[int, int, int]]]:
    """Continue a stream at ``position`` with ``words``; return the new position and the new runs.

    A new run is (turn, first word, last word) of ``span`` or more turn words that these words
    completed (one already that long before them is not new). ``ends`` is updated in place: pass a
    ``ChainMap`` over the stream's state to look without changing it.
    """
    found: list[tuple[int, int, int]] = []
    for word in words:
        updates: dict[tuple[int, int], RunEnd] = {}
        for n, i in turns.index.get(word, ()):
            j = turns.previous[(n, i)]
            # A run that begins here takes in the free short words since the required word before it.
            start, old = j + 1, False
            # Each turn word between the two (a free short one) may bring its own filler.
            reach = GAP * (i - j)
            reachable = [e for e in ends.get((n, j), ()) if position - e.position - 1 <= reach]
            if reachable:
                best = min(reachable, key=lambda e: e.start)
                start, old = best.start, best.old
            long_enough = i - start + 1 >= span and turns.letters(n, start, i) >= turns.min_chars
            if long_enough and not old:
                found.append((n, start, i))
            updates[(n, i)] = RunEnd(position, start, old or long_enough)
        for key, end in updates.items():
            kept = tuple(e for e in ends.get(key, ()) if position - e.position <= GAP * turns.widest)
            ends[key] = (*kept, end)
        position += 1
    return position, found


# The marker: pieces of a few characters, each a word of the stream, in order. A piece may overlap
# the one before it or skip one character (guessed from 32); shorter words are noise ("a", "5").
MARKER_WORD = 2
MARKER_SKIP = 1


@dataclass(frozen=True)
class MarkerRun:
    """Characters ``start`` to ``end`` (exclusive) of the marker, seen in order; the last piece at ``position``."""

    start: int
    end: int
    position: int


def scan_marker(
    marker: str, words: Iterable[str], runs: tuple[MarkerRun, ...], position: int, piece: int
) -> tuple[int, tuple[MarkerRun, ...], bool]:
    """Continue a stream at ``position``; return the new position, the live runs, and whether a run
    of ``piece`` marker characters was completed.

    Words between the pieces ("Characters 5 to 8:") are filler, even when one of them happens to
    occur in the marker too: each occurrence of each piece starts or extends its own run.
    """
    found = False
    live = list(runs)
    for word in words:
        if len(word) >= MARKER_WORD and word in marker:
            reachable = [r for r in live if position - r.position - 1 <= GAP]
            new = []
            for offset in _occurrences(marker, word):
                joined = [r for r in reachable if r.start <= offset <= r.end + MARKER_SKIP]
                start = min([offset, *(r.start for r in joined)])
                end = max([offset + len(word), *(r.end for r in joined)])
                found |= end - start >= piece
                new.append(MarkerRun(start, end, position))
            live = [r for r in live if position - r.position <= GAP] + new
        position += 1
    return position, tuple(live), found


# A word at least this long that is a piece of the marker, and no word of the turns, shows those characters
# of it wherever it stands; two such pieces (eight characters) in any order are the canary.
MARKER_TOKEN = 4


def marker_places(marker: str, words: Iterable[str], vocabulary: Set[str]) -> set[int]:
    """The marker's characters that pieces among ``words`` show, whatever their order."""
    places: set[int] = set()
    for word in words:
        if len(word) >= MARKER_TOKEN and word not in vocabulary:
            for offset in _occurrences(marker, word):
                places.update(range(offset, offset + len(word)))
    return places


def _occurrences(marker: str, word: str) -> Iterable[int]:
    offset = marker.find(word)
    while offset >= 0:
        yield offset
        offset = marker.find(word, offset + 1)
