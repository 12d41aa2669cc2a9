"""The output check: an individual answer is withheld when it leaks what the agent was shown.

Every test runs in two views of the turns (``views``: as letters, and as consonants only, for a turn
written without its vowels), on the canonical form of the answer (``canonical``: compatibility forms
and look-alike letters folded to Latin, marks and zero-width characters dropped, case folded, leetspeak's
digits folded with their letters, nothing but letters and digits), on the readings that undo reversal,
rot13, filler letters, symbols for letters and spelling alphabets, on those guided by the participant's
words (``games``: word games, letter shifts), and on every readable decoding of encoded runs inside it
(``decoding``: base64, base32, hex, URL and HTML escapes, binary, Morse, JSON):

- **verbatim**: the answer covers ``SPAN_TOKENS`` consecutive words of one of the participant's turns.
  Coverage is measured with character shingles (every ``SHINGLE_CHARS`` characters of a turn's
  canonical form), so spaces, dots or underscores between or inside words change nothing; the same
  words in another order (reversed, shuffled within a span) are caught by comparing sorted windows.
  A quote with filler words between its words (each within ``chains.GAP`` words of the last) is a span
  too, and so are places of a turn the answer shows (``positions``): pieces of it, every k-th word,
  words named by their number, twelve places in a row.
- **cumulative**: the same, over everything the project has already received from this agent plus
  this answer, so a turn asked for in pieces shorter than the span is stopped at the piece that would
  complete a span (``received.Received``): pieces of any length in any order as coverage and as places
  (two pieces of a span however it is cut, the odd words then the even ones, words by number), and the
  received answers read in order as one text, so pieces shorter than a shingle (a word or a few
  letters per answer, bare or wrapped in a sentence) line up again.
- **canary**: any ``CANARY_PIECE`` characters of the agent's secret marker, in any reading or letter
  shift, also in pieces of a few characters with other words between them (``chains.scan_marker``),
  and pieces of four or more that show ``CANARY_PIECE`` of its characters in any order, within an
  answer and across the answers received.
- **deny_list**: an entity of the agent's deny-list as whole words, or a long one spelled out.

A paraphrase passes: shared vocabulary is not a leak. What this cannot see: a transcript translated
into another language, paraphrased closely, or encoded in ways not listed (a general substitution
cipher, a code agreed outside the bank); single words handed out out of order with nothing that says
where each belongs, or in single characters wrapped in sentences: a bag of single words in any order
is what honest answers in the participant's voice also give. The question screen (``questions``),
quotas and the reviewer queue are the other lines for those.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentbank.consultation.output_check.canonical import canonical
from agentbank.consultation.output_check.chains import scan, scan_marker
from agentbank.consultation.output_check.games import marker_shifts
from agentbank.consultation.output_check.positions import spans
from agentbank.consultation.output_check.received import Received
from agentbank.consultation.output_check.reference import (
    CANARY,
    CANARY_PIECE,
    CHAIN_READINGS,
    DENY_LIST,
    SPAN_TOKENS,
    VERBATIM,
    Reference,
    window_key,
)
from agentbank.consultation.output_check.views import View


@dataclass(frozen=True)
class Verdict:
    """Whether an answer may be released, and if not which tests it failed (never the matched text)."""

    reasons: tuple[str, ...] = field(default_factory=tuple)

    @property
    def released(self) -> bool:
        """True when no test failed."""
        return not self.reasons


def check(answer: str, reference: Reference, received: Received | None = None) -> Verdict:
    """Run the tests on every reading of an answer, in both views (``views``); with ``received``, also
    against what the project has."""
    reasons = _reasons(answer, reference, received)
    if reference.consonants is not None:
        reasons |= _reasons(answer, reference.consonants, received.consonants if received is not None else None)
    return Verdict(tuple(sorted(reasons)))


def _reasons(answer: str, reference: Reference, received: Received | None) -> set[str]:
    reasons: set[str] = set()
    spelled, pieces = reference.spelled_entities, reference.canary_pieces
    readings = list(reference.readings(answer))
    places, marker = reference.shows(answer, readings)
    for name, words in readings:
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
    shifted = reference.view is View.LETTERS and _shifted_marker(reference.decoded(answer), pieces)
    if len(marker) >= CANARY_PIECE or shifted:
        reasons.add(CANARY)  # pieces of the marker in any order, or the marker under a letter shift
    covered = reference.coverage_of(words for _, words in readings)
    if any(covered.spans(reference)) or any(next(spans(places.covered(n), SPAN_TOKENS), None) for n in places.turns()):
        reasons.add(VERBATIM)  # a span, also as pieces of one answer, every k-th word or words by number
    elif received is not None and VERBATIM not in reasons:
        reasons.update(received.assess(answer, covered, places, marker))
    return reasons


def _shifted_marker(decoded: list[str], pieces: tuple[str, ...]) -> bool:
    return any(piece in s for text in decoded for s in marker_shifts(canonical(text)) for piece in pieces)


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
