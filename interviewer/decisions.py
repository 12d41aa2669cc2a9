"""The interviewer's decision as the model writes it: its schema, its token cap, and how it is read.

A decision is a follow-up (with its question) or a move-on, plus up to two short notes about the
person. The action and the question come first and are what the turn needs; the notes are extras.
A small model sometimes runs away in its notes (digit strings, a token per digit) until the token
cap cuts it off; the decision it had already written is still read (``read_cut_off``), so a long
note costs the wait but never the follow-up.
"""

from __future__ import annotations

import json
import re
from typing import Any

NOTE_CHARS = 120
NEW_NOTES = 2
QUESTION_CHARS = 240
# Every generated token costs about as much as ten prompt tokens on a small CPU. The schema bounds
# the answer (a question and two notes at their longest are about 150 tokens of prose), and the cap
# sits above that bound, so a decision in prose is never cut off.
DECISION_MAX_TOKENS = 200

_NOTES = {"type": "array", "items": {"type": "string", "maxLength": NOTE_CHARS}, "maxItems": NEW_NOTES}
# One of two shapes, so a "next" has no question to write (grammar-constrained decoding would
# otherwise write one anyway). Field order matters: decoding writes the action first, then the
# question, then the notes. The choice sits under one key because hosted endpoints want an object
# at the top.
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
                        "notes": _NOTES,
                    },
                    "required": ["action", "question", "notes"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {"action": {"type": "string", "enum": ["next"]}, "notes": _NOTES},
                    "required": ["action", "notes"],
                    "additionalProperties": False,
                },
            ]
        }
    },
    "required": ["decision"],
    "additionalProperties": False,
}

_ACTION = re.compile(r'"action"\s*:\s*"(follow_up|next)"')
_QUESTION = re.compile(r'"question"\s*:\s*("(?:[^"\\]|\\.)*")')


def read_decision(data: Any) -> dict[str, Any]:
    """The decision's fields from a parsed answer (``{"decision": {...}}``), or {} when it has none."""
    decision = data.get("decision") if isinstance(data, dict) else None
    return decision if isinstance(decision, dict) else {}


def read_cut_off(partial: str) -> dict[str, Any]:
    """The decision from an answer cut off at the token cap: its action, and a follow-up's question
    when the question was written to its closing quote; no notes. {} when not even that much was written."""
    action = _ACTION.search(partial)
    if action is None:
        return {}
    if action.group(1) == "next":
        return {"action": "next", "notes": []}
    question = _QUESTION.search(partial, action.end())
    if question is None:
        return {}
    try:
        text = json.loads(question.group(1))
    except ValueError:
        return {}
    return {"action": "follow_up", "question": text, "notes": []}
