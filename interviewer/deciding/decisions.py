"""What the interviewer's model writes, as schemas with their token caps, and how it is read.

Two calls, for two moments. The *decision* (a follow-up with its question, or a move-on) is what the
person waits for after an answer, so it writes nothing else: every generated token is on the wait.
The *notes* (at most two short facts about the person) are the interviewer's memory beyond the
transcript window the model sees; they are taken later, off the wait (``interviewer.deciding.notes``).
A decision cut off at its cap is still read when its action (and a follow-up's question) was written
(``read_cut_off``).
"""

from __future__ import annotations

import json
import re
from typing import Any

NOTE_CHARS = 120
NEW_NOTES = 2
QUESTION_CHARS = 240
# Every generated token costs about as much as ten prompt tokens on a small CPU. Each schema bounds its
# answer (a question at its longest is about 60 tokens of prose, two notes about the same) and each cap
# sits above that bound, so an answer in prose is never cut off.
DECISION_MAX_TOKENS = 120
NOTES_MAX_TOKENS = 120

# One of two shapes, so a "next" has no question to write (grammar-constrained decoding would
# otherwise write one anyway). Field order matters: decoding writes the action first. The choice sits
# under one key because hosted endpoints want an object at the top.
DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["follow_up"]},
                        "question": {"type": "string", "maxLength": QUESTION_CHARS},
                    },
                    "required": ["action", "question"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {"action": {"type": "string", "enum": ["next"]}},
                    "required": ["action"],
                    "additionalProperties": False,
                },
            ]
        }
    },
    "required": ["decision"],
    "additionalProperties": False,
}

NOTES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "notes": {"type": "array", "items": {"type": "string", "maxLength": NOTE_CHARS}, "maxItems": NEW_NOTES}
    },
    "required": ["notes"],
    "additionalProperties": False,
}

_ACTION = re.compile(r'"action"\s*:\s*"(follow_up|next)"')
_QUESTION = re.compile(r'"question"\s*:\s*("(?:[^"\\]|\\.)*")')


def read_decision(data: Any) -> dict[str, Any]:
    """The decision's fields from a parsed answer (``{"decision": {...}}``), or {} when it has none."""
    decision = data.get("decision") if isinstance(data, dict) else None
    return decision if isinstance(decision, dict) else {}


def read_notes(data: Any) -> list[str]:
    """The new notes from a parsed answer (``{"notes": [...]}``): strings only, at most two."""
    notes = data.get("notes") if isinstance(data, dict) else None
    return [n for n in notes if isinstance(n, str)][:NEW_NOTES] if isinstance(notes, list) else []


def read_cut_off(partial: str) -> dict[str, Any]:
    """The decision from an answer cut off at the token cap: its action, and a follow-up's question
    when the question was written to its closing quote. {} when not even that much was written."""
    action = _ACTION.search(partial)
    if action is None:
        return {}
    if action.group(1) == "next":
        return {"action": "next"}
    question = _QUESTION.search(partial, action.end())
    if question is None:
        return {}
    try:
        text = json.loads(question.group(1))
    except ValueError:
        return {}
    return {"action": "follow_up", "question": text}
