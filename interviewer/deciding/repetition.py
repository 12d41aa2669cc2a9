"""Whether a follow-up says again what was already said (the question, the script, an earlier follow-up),
or says itself over and over.

Small models asked to follow up often hand the scripted question back with a word changed, or read
out a sentence of the opening; now and then one runs away inside its question ("I'm going to continue
the story. I'm going to continue the story. I'm go") until the schema's length cuts it. Each is caught
before it is spoken and the interview moves on.
"""

from __future__ import annotations

import difflib
import re


def _normalized(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.casefold()).strip()


# A follow-up this close to something already said (by character alignment of the normalized text)
# repeats it: "Could you walk me through your life so far?" for the scripted "Could you walk me through
# your life so far, from your childhood up to today?" scores about 0.8; distinct questions stay under 0.5.
REPEAT_SIMILARITY = 0.75
# ...and one that quotes this many words of it in a row repeats it too, while "Why was that?" does not.
REPEAT_MIN_WORDS = 6


def repeats(candidate: str, said: list[str]) -> bool:
    """Whether ``candidate`` says again one of ``said`` (the question, the script's other text, earlier turns)."""
    mine = _normalized(candidate)
    if not mine:
        return True
    for other in said:
        theirs = _normalized(other)
        if not theirs:
            continue
        shorter, longer = sorted((mine, theirs), key=len)
        if len(shorter.split()) >= REPEAT_MIN_WORDS and f" {shorter} " in f" {longer} ":
            return True  # a whole clause lifted from the script, however long the rest
        if difflib.SequenceMatcher(None, mine, theirs, autojunk=False).ratio() >= REPEAT_SIMILARITY:
            return True
    return False


# A follow-up is one question, in at most two sentences (the instructions ask for that).
MAX_SENTENCES = 2
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)")


def runs_away(candidate: str) -> bool:
    """Whether ``candidate`` is no single short question: it does not end with a question mark, or it
    runs to more than two sentences (a model repeating itself, or cut off at the schema's length)."""
    text = candidate.strip()
    return not text.rstrip("\"')]").endswith("?") or len(_SENTENCE_END.findall(text)) > MAX_SENTENCES
