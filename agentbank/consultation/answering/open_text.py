"""Open answers as they are kept and shown: a small model's loop cut at its first repeated sentence, and
an answer stopped by its length limit ended at its last whole sentence.

A 135M model answering freely tends to say one sentence again with a word changed ("She's going to study
engineering at a top medical school. She's going to study music at a top medical school. ... at a").
The request already penalizes repeated tokens; this is the stop rule behind it.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

# A sentence: text up to its closing punctuation (and any closing quote or bracket), or to the end.
_SENTENCE = re.compile(r"[^.!?…]+(?:[.!?…]+[\"'”’)\]]*|$)")
_ENDINGS = tuple(".!?…\"'”’)]")
# Two sentences this alike (by words) are one sentence said again; shorter ones ("Yes!") may recur.
REPEAT_SIMILARITY = 0.75
MIN_LOOP_WORDS = 4


def _words(sentence: str) -> list[str]:
    return re.findall(r"[\w']+", sentence.lower())


def _repeats(sentence: str, earlier: list[str]) -> bool:
    words = _words(sentence)
    if len(words) < MIN_LOOP_WORDS:
        return False
    return any(SequenceMatcher(None, words, _words(e), autojunk=False).ratio() >= REPEAT_SIMILARITY for e in earlier)


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, whitespace normalized; the last may lack its closing punctuation."""
    return [s.strip() for s in _SENTENCE.findall(" ".join(text.split())) if s.strip()]


def tidy_open_answer(text: str, limit: int) -> str:
    """``text`` up to its first repeated sentence; when that cut it, or it reached ``limit`` characters,
    ending at a sentence boundary (an ellipsis when not even the first sentence was finished).

    Anything else is left as the model wrote it: what is kept is what the output check reads."""
    all_sentences = sentences(text)
    kept: list[str] = []
    for sentence in all_sentences:
        if _repeats(sentence, kept):
            break
        kept.append(sentence)
    cut = len(kept) < len(all_sentences) or len(text) >= limit
    if not cut or not kept:
        return text
    if not kept[-1].endswith(_ENDINGS):
        if len(kept) > 1:
            kept.pop()
        else:
            kept[-1] = kept[-1].rstrip(" ,;:-") + "…"
    return " ".join(kept)
