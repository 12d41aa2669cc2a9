"""Which words of the turns an answer shows, by their place in the turn, so that pieces and selections add up.

Shingles need a piece at least a shingle long, and chains need pieces in order. Here every answer is
read as the places in the turns it shows, in any order:

- **runs**: consecutive words of a turn as consecutive words of the answer, of any length;
- **selections**: every k-th word of a turn (the odd words, the even words, every third...), with up to
  ``FILLER`` other words between two of them ("Word 3: passphrase. Word 5: my.");
- **numbered words**: "word 17 is elephant", "the 17th word: elephant", "17. elephant", where the turn
  has that word at that place (counted as a reader counts, by the spaces between words).

Places are *solid* (runs of ``SOLID_WORDS`` words and ``SOLID_LETTERS`` letters, selections of
``SELECTION_WORDS`` words, numbered words) or *loose*: a shorter run, in an answer that is little more
than the piece (``PIECE_WORDS`` words at most). A loose place counts only within ``LOOSE_REACH`` words
of solid ones: a word or two handed out on its own completes a long piece beside it, while the common
words every honest answer shares stay apart. Twelve places in a row (``spans``) are a turn's span, as
twelve words in a row are in one answer.

What this cannot see: a turn's words handed out one at a time with nothing to say where each belongs
(a bag of words in any order is what honest answers give), and selections whose stride changes at
every word; the question screen and the quotas are the defence there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from agentbank.consultation.output_check.canonical import canonical_tokens, fold, key_form

SOLID_WORDS, SOLID_LETTERS = 3, 10
SELECTION_WORDS, MAX_STRIDE, FILLER = 4, 5, 4
PIECE_WORDS, LOOSE_REACH = 8, 5

_NUMBERED = [
    re.compile(r"\bword\s*(?:no\.?|number|#)?\s*(\d{1,5})\s*(?:is|was|reads|:|=|-|–)?\s*[\"'“‘]?([^\W_]+)", re.I),
    re.compile(r"\b(\d{1,5})\s*(?:st|nd|rd|th)\s+word\s*(?:is|was|:|=|-|–)?\s*[\"'“‘]?([^\W_]+)", re.I),
    re.compile(r"(?:^|\s)#?(\d{1,5})\s*[.):=–-]\s*[\"'“‘]?([^\W_]+)"),
]


@dataclass(frozen=True)
class Places:
    """The turns' words by place: every occurrence of every canonical word, and where each spoken word is."""

    words: tuple[tuple[str, ...], ...]
    where: dict[str, tuple[tuple[int, int], ...]]  # word -> (turn, place) of each occurrence
    spoken: tuple[tuple[tuple[str, int, int], ...], ...]  # per turn: (spoken word, first place, last place)
    # (stride, the word ``stride`` places before, the word) -> (turn, place) of the word: a run or selection
    # is found pair by pair, so a common word's hundreds of places are looked at only beside its neighbour.
    pairs: dict[tuple[int, str, str], tuple[tuple[int, int], ...]]

    @classmethod
    def build(cls, turns: Iterable[str]) -> Places:
        """Index the turns' words (folded, as the check compares them)."""
        words, spoken = [], []
        where: dict[str, list[tuple[int, int]]] = {}
        pairs: dict[tuple[int, str, str], list[tuple[int, int]]] = {}
        for n, text in enumerate(turns):
            turn: list[str] = []
            said = []
            for token in text.split():
                pieces = [fold(w) for w in canonical_tokens(token)]
                if pieces:
                    said.append(("".join(pieces), len(turn), len(turn) + len(pieces) - 1))
                    turn.extend(pieces)
            for i, word in enumerate(turn):
                where.setdefault(word, []).append((n, i))
                for stride in range(1, min(MAX_STRIDE, i) + 1):
                    pairs.setdefault((stride, turn[i - stride], word), []).append((n, i))
            words.append(tuple(turn))
            spoken.append(tuple(said))
        return cls(tuple(words), {w: tuple(p) for w, p in where.items()}, tuple(spoken),
                   {k: tuple(p) for k, p in pairs.items()})  # fmt: skip


@dataclass
class Shown:
    """Places of the turns some answers show: per turn, the solid ones and the loose ones."""

    solid: dict[int, set[int]] = field(default_factory=dict)
    loose: dict[int, set[int]] = field(default_factory=dict)

    def add(self, other: Shown) -> None:
        """Take in what another answer shows."""
        for mine, theirs in ((self.solid, other.solid), (self.loose, other.loose)):
            for n, places in theirs.items():
                mine.setdefault(n, set()).update(places)

    def covered(self, turn: int) -> set[int]:
        """The places of a turn that count: the solid ones, and loose ones reaching out from them."""
        solid, loose = self.solid.get(turn, set()), self.loose.get(turn, set())
        covered = set(solid)
        for place in solid:
            for step in (-1, 1):
                reach, at = 0, place + step
                while at in loose and at not in solid and reach < LOOSE_REACH:
                    covered.add(at)
                    reach, at = reach + 1, at + step
        return covered

    def turns(self) -> set[int]:
        """Turns with any place shown."""
        return set(self.solid) | set(self.loose)


def spans(covered: set[int], span: int) -> Iterator[tuple[int, int]]:
    """(first, last) of every run of ``span`` or more consecutive places."""
    for start in sorted(p for p in covered if p - 1 not in covered):
        end = start
        while end + 1 in covered:
            end += 1
        if end - start + 1 >= span:
            yield start, end


def shown(places: Places, readings: Iterable[tuple[list[str], bool]], texts: Iterable[str]) -> Shown:
    """What an answer shows: runs and selections in each of its ``readings`` (word lists, each with whether
    its words stand in the answer's order, where short pieces are sought), numbered words in each of its
    ``texts`` (the answer and its decodings)."""
    result = Shown()
    for words, in_order in readings:
        piece = in_order and len(words) <= PIECE_WORDS
        loose: list[tuple[int, range, range]] = []  # short runs: (turn, places, the answer's words)
        used: set[int] = set()  # the answer's words that solid places are made of
        for stride, n, first, last, count, end in _runs(places, words, piece):
            taken = range(first, last + 1, stride)
            letters = sum(len(places.words[n][i]) for i in taken)
            if (count >= SOLID_WORDS if stride == 1 else count >= SELECTION_WORDS) and letters >= SOLID_LETTERS:
                result.solid.setdefault(n, set()).update(taken)
                used.update(range(end - count + 1, end + 1) if stride == 1 else (end,))
            elif stride == 1 and piece:
                loose.append((n, taken, range(end - count + 1, end + 1)))
        for n, taken, own in loose:  # a word of a long piece is not also a short piece elsewhere
            if not used.intersection(own):
                result.loose.setdefault(n, set()).update(taken)
    for text in texts:
        for n, first, last in _numbered(places, text):
            result.solid.setdefault(n, set()).update(range(first, last + 1))
    return result


def _runs(places: Places, words: list[str], singles: bool) -> Iterator[tuple[int, int, int, int, int, int]]:
    """(stride, turn, first place, last place, words, the answer's position of its last word) of every
    maximal run or selection of two or more words in ``words``; with ``singles``, also every place of
    every word alone (a short answer's pieces may be one word)."""
    # (stride, turn, place) -> (answer position of its word, first place, count)
    state: dict[tuple[int, int, int], tuple[int, int, int]] = {}
    ended: dict[tuple[int, int, int], tuple[int, int, int]] = {}
    for x, word in enumerate(words):
        updates: dict[tuple[int, int, int], tuple[int, int, int]] = {}
        for stride in range(1, MAX_STRIDE + 1):
            # Consecutive words run without filler (chains take those); a selection may have a few between.
            for y in range(x - 1, max(-1, x - 2 - (0 if stride == 1 else FILLER)), -1):
                for n, i in places.pairs.get((stride, words[y], word), ()):
                    if stride > 1 and list(words[y + 1 : x]) == list(places.words[n][i - stride + 1 : i]):
                        continue  # the very words a selection skips: that is a quote, read every k-th word
                    before = state.get((stride, n, i - stride))
                    grown = before is not None and before[0] == y
                    found = (x, before[1], before[2] + 1) if grown and before else (x, i - stride, 2)
                    if (stride, n, i) not in updates or found[2] > updates[(stride, n, i)][2]:
                        updates[(stride, n, i)] = found
                        if grown:
                            ended.pop((stride, n, i - stride), None)
        state.update(updates)
        ended.update(updates)
    for (stride, n, last), (x, first, count) in ended.items():
        yield stride, n, first, last, count, x
    if singles:
        for x, word in enumerate(words):
            for n, i in places.where.get(word, ()):
                yield 1, n, i, i, 1, x


def _numbered(places: Places, text: str) -> Iterator[tuple[int, int, int]]:
    """(turn, first place, last place) of every word the text names by its number, where the turn has it there."""
    for pattern in _NUMBERED:
        for match in pattern.finditer(text):
            number, word = int(match.group(1)), key_form(match.group(2))
            for n, said in enumerate(places.spoken):
                if 1 <= number <= len(said) and said[number - 1][0] == word:
                    yield n, said[number - 1][1], said[number - 1][2]
