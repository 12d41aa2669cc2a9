"""What a project has received from one agent, so a turn or the canary handed out in pieces is seen whole.

Three views of the released answers, each extended as answers are released:

- **coverage**: which characters of which turns the answers reproduced, each answer on its own, in
  any order; this needs pieces at least a shingle (``SHINGLE_CHARS``) long;
- **the stream**: the answers read in the order they were released, as one text per reading. Shingles
  and canary pieces that cross from one answer into the next are found here, so a few letters or one
  word per answer, in order, line up again. Only the last few characters need keeping;
- **chains**: the same stream as words, where a turn's words follow each other with a little filler
  between them (``chains``): one word per answer, wrapped in a sentence, in order; and the marker's
  pieces, a few characters per answer, in order whatever words surround them;
- **places**: the places of the turns each answer showed (``positions``), in any order: a short piece
  beside a long one, the odd words then the even words, words named by their number; and the marker's
  characters that pieces of four or more showed, in any order.

The same is kept for the consonant view (``consonants``), so a turn's pieces without their vowels add up too.

Nothing here is stored: it is rebuilt from the released answers (sealed with the participant's key)
on each check, and the answers are destroyed with the rest on withdrawal.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentbank.consultation.output_check.canonical import canonical_tokens
from agentbank.consultation.output_check.chains import EndsDict, MarkerRun, scan, scan_marker
from agentbank.consultation.output_check.games import shifted
from agentbank.consultation.output_check.positions import Shown, spans
from agentbank.consultation.output_check.reference import (
    CANARY,
    CANARY_PIECE,
    CHAIN_READINGS,
    CUMULATIVE,
    SHINGLE_CHARS,
    SPAN_TOKENS,
    Coverage,
    Reference,
)
from agentbank.consultation.output_check.views import View

RECENT = 48  # words of the stream a letter shift is guessed over


@dataclass
class _Step:
    """What one answer adds to the stream, computed without changing it."""

    coverage: Coverage
    tails: dict[str, str]
    marker: dict[str, tuple[int, tuple[MarkerRun, ...]]]
    ends: dict[str, EndsDict]
    positions: dict[str, int]
    runs: bool
    canary: bool


@dataclass
class Received:
    """What a project has received from one agent (see the module's description)."""

    reference: Reference
    coverage: Coverage = field(default_factory=Coverage)
    tails: dict[str, str] = field(default_factory=dict)  # per reading: the stream's last characters
    # per reading: the stream's position in words and the runs of the marker's pieces still in reach
    marker: dict[str, tuple[int, tuple[MarkerRun, ...]]] = field(default_factory=dict)
    ends: dict[str, EndsDict] = field(default_factory=dict)  # per word-order reading: the chains' state
    positions: dict[str, int] = field(default_factory=dict)
    recent: list[str] = field(default_factory=list)  # the stream's last words as written, for a letter shift
    places: Shown = field(default_factory=Shown)  # the places of the turns the answers showed
    marker_shown: set[int] = field(default_factory=set)  # the marker's characters pieces of it showed
    consonants: Received | None = None  # the same in the consonant view

    def __post_init__(self) -> None:
        if self.consonants is None and self.reference.consonants is not None:
            self.consonants = Received(self.reference.consonants)

    @classmethod
    def of(cls, reference: Reference, texts: Iterable[str]) -> Received:
        """What a team received: ``texts`` in the order they were released."""
        received = cls(reference)
        for text in texts:
            received.add(text)
        return received

    def add(self, text: str) -> None:
        """Count a released answer as received, after those before it (in both views)."""
        if self.consonants is not None:
            self.consonants.add(text)
        self.recent = [*self.recent, *canonical_tokens(text)][-RECENT:]
        places, marker = self.reference.shows(text)
        self.places.add(places)
        self.marker_shown |= marker
        step = self._step(text, self.reference.coverage([text]))
        self.coverage = self.coverage.union(step.coverage)
        self.tails.update(step.tails)
        self.marker.update(step.marker)
        for name, overlay in step.ends.items():
            self.ends.setdefault(name, {}).update(overlay)
        self.positions.update(step.positions)

    def assess(self, text: str, covered: Coverage, places: Shown, marker: set[int]) -> set[str]:
        """The reasons to withhold ``text`` given what was received: a span or the canary it completes.
        ``covered``, ``places`` and ``marker`` are what the answer alone shows (``check``)."""
        step = self._step(text, covered)
        reasons = {CANARY} if step.canary or self._completes_marker(marker) else set()
        if step.runs or self.completes_span(step.coverage) or self._completes_places(places) or self._shifted(text):
            reasons.add(CUMULATIVE)
        return reasons

    def _shifted(self, text: str) -> bool:
        """Whether the stream's recent words and this answer's, under the letter shift that makes the
        participant's words of them, hold a quote this answer completes (one shifted word per answer)."""
        if self.reference.view is not View.LETTERS:
            return False
        new = canonical_tokens(text)
        found = shifted([*self.recent, *new], self.reference.vocabulary)
        if not new or found is None:
            return False
        words, ends = found[1], EndsDict()
        at, _ = scan(self.reference.words, words[: len(self.recent)], ends, 0, SPAN_TOKENS)
        return bool(scan(self.reference.words, words[len(self.recent) :], ends, at, SPAN_TOKENS)[1])

    def _completes_marker(self, marker: set[int]) -> bool:
        return bool(marker - self.marker_shown) and len(marker | self.marker_shown) >= CANARY_PIECE

    def _completes_places(self, places: Shown) -> bool:
        """Whether the answer's places, joined to those received, make a span that it helped to build."""
        joined = Shown()
        joined.add(self.places)
        joined.add(places)
        for n in places.turns():
            before, after = self.places.covered(n), joined.covered(n)
            for first, last in spans(after, SPAN_TOKENS):
                if any(p not in before for p in range(first, last + 1)):
                    return True
        return False

    def completes_span(self, answer: Coverage) -> bool:
        """Whether this answer, joined to what was received, yields a span that it helped to build."""
        before = self.coverage.marks
        for n, start, end in self.coverage.union(answer).spans(self.reference):
            old, new = before.get(n), answer.marks.get(n)
            if new is not None and any(new[i] and not (old and old[i]) for i in range(start, end)):
                return True
        return False

    def _step(self, text: str, covered: Coverage) -> _Step:
        reference, marker = self.reference, self.reference.canary
        step = _Step(covered.union(Coverage()), {}, {}, {}, {}, runs=False, canary=False)
        for name, words in self._readings(text).items():
            # The kept tail is one character short of a shingle (and, for the canary, of a piece):
            # everything found here takes in at least one new character.
            tail, joined = self.tails.get(name, ""), "".join(words)
            window = tail + joined
            for i in range(len(window) - SHINGLE_CHARS + 1):
                for n, offset in reference.shingles.get(hash(window[i : i + SHINGLE_CHARS]), ()):
                    step.coverage.mark(n, len(reference.turns[n].text), offset, offset + SHINGLE_CHARS)
            step.tails[name] = window[-(SHINGLE_CHARS - 1) :]
            stream = tail[-(CANARY_PIECE - 1) :] + joined
            step.canary |= any(piece in stream for piece in reference.canary_pieces)
            if marker:
                at, pieces = self.marker.get(name, (0, ()))
                at, pieces, found = scan_marker(marker, words, pieces, at, CANARY_PIECE)
                step.marker[name], step.canary = (at, pieces), step.canary or found
            if name.removeprefix("decoded-") in CHAIN_READINGS:
                overlay: EndsDict = {}
                state = ChainMap(overlay, self.ends.get(name, {}))
                position, runs = scan(reference.words, words, state, self.positions.get(name, 0), SPAN_TOKENS)
                step.ends[name], step.positions[name] = overlay, position
                step.runs |= bool(runs)
        return step

    def _readings(self, text: str) -> dict[str, list[str]]:
        """Each reading's words of the answer as written, and of its last decoding ("decoded-").

        Two streams, each read one way throughout: pieces as written line up in the first, encoded
        pieces in the second, and a decoy encoded run beside a plain piece hides it from neither.
        """
        return self.reference.stream_readings(text)


__all__ = ["Received"]
