"""The deny-list: names a participant mentioned (people, places, employers), which answers must not repeat.

A simple, honest heuristic over the participant's own turns, with no model and no gazetteer:

- a run of two or more capitalized words is a name ("Rosa Martinez", "Ford Motor Company"), with a
  leading common word dropped ("The", "My") when the run starts a sentence;
- a single capitalized word counts only where capitals are not explained by grammar: not at the start
  of a sentence, and not a common word (pronouns, days, months, interjections, nationalities...);
- a sentence-initial word is kept too when the same word appears capitalized mid-sentence elsewhere.

Known limits: names written in lower case (transcription often loses case) are missed; a name only
ever said at the start of a sentence is missed; capitalized common nouns (a brand used as a word) are
over-included, which withholds more answers for review, not fewer. The list is sealed with the
participant's key, so it is destroyed with the rest of their data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from agentbank.keys.crypto import Cipher

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][\w'’-]*")
MAX_ENTITIES = 500

COMMON = frozenset(
    """
    i i'm i've i'd i'll me my mine we our us you your he him his she her they them their it its a an the
    and or but so if then because when where what who why how yes no yeah okay ok oh well um uh hmm sure
    mr mrs ms dr mom mum dad mother father grandma grandpa god lord jesus christmas easter thanksgiving
    monday tuesday wednesday thursday friday saturday sunday january february march april may june july
    august september october november december english american americans spanish french german chinese
    black white christian catholic protestant jewish muslim democrat democrats republican republicans
    internet tv covid this that these those there here in on at of for to from with by as after before
    also just like maybe actually really anyway interviewer participant
    """.split()
)


def extract_entities(texts: Iterable[str]) -> list[str]:
    """Names found in ``texts`` (the participant's turns), first mention first, without repeats."""
    sentences = [s for text in texts for s in _SENTENCES.split(text) if s.strip()]
    mid_sentence_caps = {
        w.lower() for s in sentences for w in _WORD.findall(s)[1:] if w[0].isupper() and w.lower() not in COMMON
    }
    found: dict[str, None] = {}
    for sentence in sentences:
        words = _WORD.findall(sentence)
        run: list[str] = []
        for position, word in enumerate([*words, ""]):
            if word and word[0].isupper():
                run.append(word if position else f"^{word}")  # mark the sentence-initial word
                continue
            _emit(run, mid_sentence_caps, found)
            run = []
    return list(found)[:MAX_ENTITIES]


def _emit(run: list[str], mid_caps: set[str], found: dict[str, None]) -> None:
    initial = bool(run) and run[0].startswith("^")
    words = [w.lstrip("^") for w in run]
    while words and words[0].lower() in COMMON:
        words, initial = words[1:], False
    while words and words[-1].lower() in COMMON:
        words = words[:-1]
    if not words:
        return
    # One capitalized word at the start of a sentence is explained by grammar, unless it is also
    # capitalized mid-sentence somewhere else.
    if len(words) == 1 and initial and words[0].lower() not in mid_caps:
        return
    found.setdefault(" ".join(words), None)


def seal(cipher: Cipher, entities: list[str]) -> bytes:
    """The deny-list sealed with the participant's key."""
    return cipher.seal(json.dumps(entities))


def open_sealed(cipher: Cipher, blob: bytes | None) -> list[str]:
    """The deny-list of ``seal`` (empty for agents built before deny-lists existed)."""
    return json.loads(cipher.open(blob)) if blob else []
