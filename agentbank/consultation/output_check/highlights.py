"""Where a withheld answer overlaps what it must not repeat: character ranges for the reviewer's eyes only.

The output check says only which tests failed (its verdict never holds the matched text). A reviewer
deciding on a held answer needs to see which words tripped it, so the queue marks, in the answer as
written, the words of every twelve-word window found in a participant's turn, the words holding the
agent's canary (or a piece of it), and the names of its deny-list. Only the plain reading is
marked: an answer that hid a quote in an encoding or reordered its words is still held, but shows
no marks, and the reasons say why it was held.
"""

from __future__ import annotations

import re

from agentbank.consultation.output_check.canonical import key_form
from agentbank.consultation.output_check.reference import SPAN_TOKENS, Reference, window_key

Ranges = list[tuple[int, int]]
WORD = re.compile(r"[^\W_]+")


def overlaps(text: str, reference: Reference) -> Ranges:
    """Character ranges of ``text`` that repeat a turn, hold the canary or name someone on the deny-list."""
    words = [(m.start(), m.end(), key_form(m.group())) for m in WORD.finditer(text)]
    words = [w for w in words if w[2]]
    keys = [w[2] for w in words]
    marked = [False] * len(words)
    for i in range(len(words) - SPAN_TOKENS + 1):
        if window_key(keys[i : i + SPAN_TOKENS]) in reference.windows:
            marked[i : i + SPAN_TOKENS] = [True] * SPAN_TOKENS
    pieces = reference.canary_pieces
    for i, key in enumerate(keys):
        if any(piece in key for piece in pieces):
            marked[i] = True
    for entity in reference.entities:
        size = len(entity)
        for i in range(len(keys) - size + 1):
            if tuple(keys[i : i + size]) == entity:
                marked[i : i + size] = [True] * size
    return _ranges(words, marked)


def _ranges(words: list[tuple[int, int, str]], marked: list[bool]) -> Ranges:
    """Marked words as ranges, neighbours joined (with the spaces and punctuation between them)."""
    ranges: Ranges = []
    for (start, end, _), on in zip(words, marked, strict=True):
        if not on:
            continue
        if ranges and _adjacent(words, ranges[-1][1], start):
            ranges[-1] = (ranges[-1][0], end)
        else:
            ranges.append((start, end))
    return ranges


def _adjacent(words: list[tuple[int, int, str]], previous_end: int, start: int) -> bool:
    """No unmarked word lies between the last range's end and ``start``."""
    return not any(previous_end <= s and e <= start for s, e, _ in words)
