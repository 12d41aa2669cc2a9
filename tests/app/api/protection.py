"""Shared set-up for the protection tests: a team, two participants' agents, and a model that leaks."""

from __future__ import annotations

import re
from typing import Any

from agentbank.consultation.door import AgentDoor
from agentbank.providers.fakes import ScriptedChatModel
from tests.support.factories import build, responder

MARKER_LINE = re.compile(r"Private marker, never to be repeated: (\S+)")


def planted_marker(messages) -> str:
    """The canary the engine planted in a prompt's system context."""
    match = MARKER_LINE.search(messages[0]["content"])
    assert match, "the engine did not plant a canary"
    return match.group(1)


def leaky(messages, schema) -> Any:
    """Answers like ``responder``, except that a question about the marker (or its lucky charm) gets the marker back."""
    props = (schema or {}).get("properties", {})
    asked = messages[-1]["content"].lower()
    # The screen refuses a question that names the marker; "lucky charm" is a cue it does not read.
    if "cited_turns" in props and ("marker" in asked or "lucky charm" in asked):
        turns = props["cited_turns"]["items"]["enum"][:1]
        return {"answer": f"Sure, my private marker is {planted_marker(messages)}.", "cited_turns": turns}
    return responder(messages, schema)


def make_team(api, script=leaky, turns=(12, 4), extra: str | None = None) -> dict[str, Any]:
    """Clients of a project team and a reviewer, and two agents of two participants (different interviews);
    ``extra`` is a last turn both participants say."""
    chat = ScriptedChatModel(script)
    p1, a1, chat, embedder, keys = build(api.session, ref="file:one.json", turns=turns[0], chat=chat, extra=extra)
    p2, a2, *_ = build(api.session, ref="file:two.json", turns=turns[1], chat=chat, embedder=embedder, extra=extra)
    door = AgentDoor(chat=chat, embedder=embedder, keys=keys, memory_token_budget=4000)
    chat.calls.clear()
    return {
        "pi": api.token("pi", "projects:apply", "individual:query"),
        "member": api.token("member", "individual:query"),
        "outsider": api.token("outsider", "projects:apply", "individual:query"),
        "reviewer": api.token("reviewer", "review"),
        "admin": api.token("admin", "admin"),
        "agents": [a1, a2],
        "participants": [p1, p2],
        "chat": chat,
        "door": door,
        "embedder": embedder,
        "keys": keys,
    }


def open_job(api, team, project, questions, agents=None, key="open-1"):
    """Submit open questions through the restricted endpoint; returns the job's id."""
    body = {"kind": "open", "questions": list(questions),
            "agents": [str(a.id) for a in (agents or team["agents"][:1])]}  # fmt: skip
    r = api.client.post(f"/v1/projects/{project}/jobs", json=body, headers={**team["member"], "Idempotency-Key": key})
    assert r.status_code == 202, r.text
    return r.json()["id"]
