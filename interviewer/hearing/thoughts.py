"""Whether the words said up to a pause end a finished thought (``judge``), and a pause's words heard and
judged (``Pause``): a thought that ends on a filler ("um"), a conjunction ("and", "so", "because"), a
preposition or an article, or on a comma or a trailing "...", is not finished (``turn_end`` says how long
each judgement waits).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from interviewer.hearing.ports import Transcriber
from interviewer.hearing.transcription import SAMPLE_RATE

# Words a finished thought does not end on. Kept to words that almost never close an English sentence,
# so a finished answer is not made to wait: "well", "before" or "her" can end one and are left out.
FILLERS = frozenset({"um", "umm", "uh", "uhm", "er", "erm", "ah", "hmm", "mm", "mhm"})
CONJUNCTIONS = frozenset({
    "and", "but", "or", "nor", "so", "because", "cause", "cuz", "since", "although", "though", "while",
    "whereas", "if", "unless", "until", "till", "when", "whether", "that", "which", "who", "whose", "where",
    "then", "plus", "also", "like", "as",
})  # fmt: skip
FUNCTION_WORDS = frozenset({
    "the", "a", "an", "my", "our", "their", "your", "its", "of", "to", "with", "from", "into", "onto", "at",
    "for", "by", "i", "we", "they", "he", "she", "was", "were", "is", "are", "very", "really", "just", "more",
    "most", "kind", "sort", "gonna", "wanna", "didn't", "don't", "wasn't", "couldn't", "i'm", "it's",
})  # fmt: skip
_OPEN = FILLERS | CONJUNCTIONS | FUNCTION_WORDS
# These do end sentences ("the one I like", "I knew that"), and Whisper writes the full stop then;
# unpunctuated, they trail. A word in this set ends a thought only with its full stop.
_ENDS_WITH_STOP = frozenset({"like", "that", "then", "also", "as", "where", "when", "more", "most", "it's",
                             "is", "are", "was", "were", "just", "really"})  # fmt: skip
# A preposition ends a finished sentence now and then ("hard to listen to"), but Whisper writes its full stop
# after "we moved to" as well: the turn waits for what follows, unless it was a question ("looking at?").
_PREPOSITIONS = frozenset({"of", "to", "with", "from", "into", "onto", "at", "for", "by"})
# A conjunction that closes a common phrase ends the thought: "I think so.", "ten years or so."
_CLOSING_PAIRS = frozenset({"think so", "hope so", "guess so", "believe so", "suppose so", "said so", "or so",
                            "not so", "so so", "because because", "even though", "as well", "as such"})  # fmt: skip
# "My favorite teacher was." is a sentence left hanging, written with its full stop all the same: a verb "to be"
# ends a thought after a pronoun ("that's how it was.") or in a clause that asks or compares ("where the
# house was.", "than my father was."), looked for among the few words before it.
_COPULAS = frozenset({"is", "are", "was", "were"})
_COPULA_SUBJECTS = frozenset({"it", "he", "she", "they", "we", "i", "you", "that", "this", "there", "these",
                              "those", "who", "what", "one"})  # fmt: skip
_COPULA_CLAUSES = frozenset({"where", "when", "who", "what", "how", "why", "which", "than", "as", "whatever",
                             "wherever", "whoever", "whether", "if"})  # fmt: skip
COPULA_LOOKBACK = 4  # words before the verb searched for a clause that asks or compares
_TRAILING = ("...", "\u2026", ",", ";", ":", "-", "\u2014", "\u2013")
_WORD = re.compile(r"[a-z']+")


def _last_word(text: str) -> str | None:
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    return words[-1] if words else None


class Thought(StrEnum):
    """What the words so far say about the pause after them."""

    FINISHED = "finished"
    UNFINISHED = "unfinished"
    UNKNOWN = "unknown"  # no words yet, or they could not be transcribed


def judge(text: str) -> Thought:
    """Whether ``text`` (what the person said up to a pause, as transcribed) ends a finished thought."""
    stripped = text.strip().strip("\"')]")
    words = _WORD.findall(stripped.lower().replace("\u2019", "'"))
    if not words:
        return Thought.UNKNOWN
    if stripped.endswith(_TRAILING):
        return Thought.UNFINISHED
    last = words[-1]
    stopped = stripped.endswith((".", "!", "?"))
    if last in FILLERS:
        return Thought.UNFINISHED  # "Um." is Whisper's spelling of a pause to think, not an answer
    if last in _PREPOSITIONS:
        return Thought.FINISHED if stripped.endswith("?") else Thought.UNFINISHED
    if stopped and " ".join(words[-2:]) in _CLOSING_PAIRS:
        return Thought.FINISHED
    if (last in _COPULAS and len(words) >= 2 and words[-2] not in _COPULA_SUBJECTS
            and not _COPULA_CLAUSES & set(words[-1 - COPULA_LOOKBACK : -1])):  # fmt: skip
        return Thought.UNFINISHED
    if last in _ENDS_WITH_STOP:
        return Thought.FINISHED if stopped else Thought.UNFINISHED
    if last in _OPEN:
        return Thought.UNFINISHED
    return Thought.FINISHED


# A pause whose words read as finished is checked on its last words heard alone: Whisper, given a whole
# clause, tends to drop a trailing "and" or "because" (and end the clause with a full stop); given only the
# last second or so, it keeps them. Which tail keeps them turns on a few milliseconds of where it starts
# ("teacher was..." from 1.2 s, "my favorite teacher was." from 1.6 s), so more than one may be heard
# (``TurnTaking.tails_s``): any that trails keeps the turn open. A tail reaches back past the words kept at an
# earlier pause: "but" heard alone is "Bye.", heard after "we tried to save money" it trails.
TAIL_S = 1.2
TAIL_AFTER_S = 0.2  # the tail reaches this far past the last speech frame (the word's own decay)
# Speech heard since the last span that gave no word at all: something was said that Whisper left out.
UNHEARD_SPEECH_S = 0.15


@dataclass(frozen=True)
class Pause:
    """A pause whose words are to be judged: the speech end ``at`` (s) and ``end`` (its sample), the spans
    ``kept`` before ``since``, whether the detector heard speech since then (``spoke``); the tails to hear
    (``TurnTaking.tails_s`` and ``tail_must_agree``)."""

    at: float | None
    since: int
    kept: tuple[str, ...]
    spoke: bool
    end: int | None
    tails_s: tuple[float, ...] = (TAIL_S,)
    tail_must_agree: bool = False

    def judge(self, transcriber: Transcriber, audio: np.ndarray, *, context: str | None = None) -> tuple[str, Thought]:
        """Transcribe ``audio[since:]`` and read everything said up to the pause: the new words and their
        judgement. Speech the detector heard but no word came from is taken as a thought not finished (a
        mumbled "and"); a finished one is checked on its last words heard alone (``TAIL_S``)."""
        rest = transcriber.transcribe(audio[self.since :], context=context).text.strip()
        said = " ".join(piece for piece in [*self.kept, rest] if piece)
        thought = judge(said)
        if not rest and self.spoke:
            thought = Thought.UNKNOWN
        for tail_s in self.tails_s:
            if thought is not Thought.FINISHED or self.end is None:
                break
            start = self.end - round(tail_s * SAMPLE_RATE)
            if start <= 0:
                continue  # all the speech there is, heard whole already
            tail = transcriber.transcribe(audio[start : self.end + round(TAIL_AFTER_S * SAMPLE_RATE)])
            if judge(tail.text) is Thought.UNFINISHED:
                thought = Thought.UNFINISHED
            elif self.tail_must_agree and _last_word(tail.text) != _last_word(said):
                thought = Thought.UNKNOWN  # two hearings of the last word differ: Whisper is guessing
        return rest, thought
