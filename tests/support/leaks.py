"""A scripted model that gives an item's right answer only when its prompt states it."""

from __future__ import annotations

import re
from typing import Any

from agentbank.instruments.gss import load_gss
from tests.support.factories import responder

GSS = load_gss()


def stated(system: str, key: str) -> int | None:
    """The code of ``key`` if the prompt states the person's answer in any form the conditions use."""
    item = GSS.item(key)
    for option in item.options:
        if f"{item.meta.get('description')}: {option.label}".lower() in system.lower():
            return option.code
    return None


def leak_detector(messages: list[dict[str, str]], schema: dict[str, Any] | None) -> Any:
    """A model that answers right only when its prompt holds the answer; otherwise the first code."""
    props = (schema or {}).get("properties", {})
    single = "answer" in props and "cited_turns" not in props
    if not single and not (props and all(k in GSS.item_keys() for k in props)):
        return responder(messages, schema)  # reflections, personas: whatever the bank's builds need
    system = messages[0]["content"]
    asked = [k.lower() for k in re.findall(r"^([A-Z]+):", messages[1]["content"], re.MULTILINE)]
    codes = {k: GSS.item(k).codes[0] if (code := stated(system, k)) is None else code for k in asked}

    def reply(shape: dict[str, Any], code: int) -> Any:
        if "properties" not in shape:
            return code  # a bare code (several items, no reasons)
        return {"reason": "", "answer": code} if "reason" in shape["properties"] else {"answer": code}

    if single:
        return reply(schema or {}, codes[asked[0]])
    return {k: reply(props[k], code) for k, code in codes.items()}
