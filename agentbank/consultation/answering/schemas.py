"""JSON schemas that make every answer valid by construction: option codes as an enum, bounded numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentbank.instruments.model import Item

REASON_CHARS = 200
OPEN_ANSWER_CHARS = 900


def value_schema(item: Item) -> dict[str, Any]:
    """The answer alone: an option code, a number within bounds, or text."""
    if item.kind in ("categorical", "ordinal"):
        return {"type": "integer", "enum": item.codes}
    if item.kind in ("multiple", "ranking"):
        # A ranking names every option once; a multiple choice at least one, none twice.
        least = len(item.codes) if item.kind == "ranking" else 1
        return {"type": "array", "items": {"type": "integer", "enum": item.codes}, "minItems": least,
                "maxItems": len(item.codes), "uniqueItems": True}  # fmt: skip
    if item.kind == "numeric":
        whole = all(b is None or float(b).is_integer() for b in (item.minimum, item.maximum))
        return {"type": "integer" if whole else "number", "minimum": item.minimum, "maximum": item.maximum}
    return {"type": "string", "minLength": 1, "maxLength": OPEN_ANSWER_CHARS}


def repeats_an_option(item: Item, value: Any) -> bool:
    """Whether a list answer names an option twice: a model's grammar may not hold ``uniqueItems``, so
    the engine checks it before the answer is stored."""
    return item.kind in ("multiple", "ranking") and isinstance(value, list) and len(set(value)) != len(value)


def answer_schema(item: Item, reasons: bool = True) -> dict[str, Any]:
    """A reason in the person's voice (unless ``reasons`` is off), then the answer."""
    properties: dict[str, Any] = {"answer": value_schema(item)}
    if reasons:
        properties = {"reason": {"type": "string", "maxLength": REASON_CHARS}, **properties}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def batch_schema(items: Sequence[Item], reasons: bool = True) -> dict[str, Any]:
    """Several items in one call: one property per item key, holding the answer object, or without
    reasons the bare answer (``{"cappun": 1}``), the fewest tokens a model can generate."""
    return {
        "type": "object",
        "properties": {item.key: answer_schema(item) if reasons else value_schema(item) for item in items},
        "required": [item.key for item in items],
        "additionalProperties": False,
    }


def open_schema(turns: Sequence[int]) -> dict[str, Any]:
    """Free text plus the numbers of one to three turns it draws on, chosen from the turns shown."""
    return {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "minLength": 1, "maxLength": OPEN_ANSWER_CHARS},
            "cited_turns": {
                "type": "array",
                "items": {"type": "integer", "enum": list(turns)},
                "minItems": 1,
                "maxItems": 3,
            },
        },
        "required": ["answer", "cited_turns"],
        "additionalProperties": False,
    }


def utterance_schema(turns: Sequence[int], stances: Sequence[int]) -> dict[str, Any]:
    """A focus group's utterance: free text, where the speaker now stands, and the turns it draws on."""
    schema = open_schema(turns)
    properties = {"answer": schema["properties"]["answer"], "stance": {"type": "integer", "enum": list(stances)},
                  "cited_turns": schema["properties"]["cited_turns"]}  # fmt: skip
    return {**schema, "properties": properties, "required": ["answer", "stance", "cited_turns"]}


def describe_item(item: Item) -> str:
    """An item as the prompt shows it: key, wording, and the options with their codes."""
    text = f"{item.key.upper()}: {item.question}"
    if item.options:
        text += "\nOptions: " + "; ".join(f"{o.code} = {o.label}" for o in item.options)
    if item.kind == "multiple":
        text += "\nAnswer with the codes of every option that applies (at least one), as a list."
    elif item.kind == "ranking":
        text += "\nAnswer with every option's code once, as a list, the one you prefer most first."
    elif item.kind == "numeric":
        text += f"\nAnswer with a whole number from {item.minimum:g} to {item.maximum:g}."
    return text
