"""Helpers of the focus-group tests: a project approved for focus groups with four agents, a scripted model
that moderates by the first option and answers as each seat, and a group submitted through the domain."""

from __future__ import annotations

import re
import uuid
from collections import Counter
from typing import Any

from agentbank.consultation.door import AgentDoor
from agentbank.providers.fakes import ScriptedChatModel, minimal_answer
from tests.support.factories import build, responder

MARKER = re.compile(r"Private marker, never to be repeated: (\S+)")
SEAT = re.compile(r"You sit at Seat (\d+)")


class GroupModel:
    """Moderates by the first option the schema allows; answers as its seat, changing its stance after its
    second turn; a question about the "lucky charm" gets the agent's private marker back (an extraction);
    ``on_moderator`` runs (outside any transaction) before the n-th moderator call."""

    def __init__(self, on_moderator: dict[int, Any] | None = None) -> None:
        self.moderator_calls = 0
        self.turns: Counter[int] = Counter()
        self.on_moderator = on_moderator or {}

    def __call__(self, messages, schema) -> Any:
        props = (schema or {}).get("properties", {})
        if "action" in props:
            self.moderator_calls += 1
            if (hook := self.on_moderator.get(self.moderator_calls)) is not None:
                hook()
            return minimal_answer(schema)
        if "stance" in props:
            seat = int(SEAT.search(messages[0]["content"]).group(1))
            self.turns[seat] += 1
            turns = props["cited_turns"]["items"]["enum"][:1]
            if "lucky charm" in messages[-1]["content"].lower():
                marker = MARKER.search(messages[0]["content"]).group(1)
                return {"answer": f"My lucky charm is {marker}.", "stance": 0, "cited_turns": turns}
            stance = -1 if self.turns[seat] <= 1 else 1
            text = f"Speaking from seat {seat}, the community garden plan would help families near the plant."
            return {"answer": text, "stance": stance, "cited_turns": turns}
        return responder(messages, schema)


def group_team(api, seats: int = 4, script: GroupModel | None = None) -> dict[str, Any]:
    """Four agents of four participants, a scripted model, a door, and the team's clients."""
    model = script or GroupModel()
    chat = ScriptedChatModel(model)
    built = [build(api.session, ref=f"file:group{n}.json", turns=6, chat=chat) for n in range(1)]
    _, _, chat, embedder, keys = built[0]
    built += [build(api.session, ref=f"file:group{n}.json", turns=6, chat=chat, embedder=embedder, keys=keys)
              for n in range(1, seats)]  # fmt: skip
    door = AgentDoor(chat=chat, embedder=embedder, keys=keys, memory_token_budget=4000)
    chat.calls.clear()
    pi, member = api.token("pi", "projects:apply", "individual:query"), api.token("member", "individual:query")
    return {"pi": pi, "member": member,
            "reviewer": api.token("reviewer", "review"), "participants": [b[0] for b in built],
            "agents": [b[1] for b in built], "chat": chat, "model": model, "door": door, "embedder": embedder,
            "keys": keys}  # fmt: skip


def approve_groups(api, team, quota: int = 100) -> str:
    """A project approved for focus groups over the team's agents; returns its id."""
    r = api.client.post(
        "/v1/projects",
        json={"title": "Gardens", "purpose": "How residents discuss a community garden plan in a group.",
              "harms": "Simulated views could be mistaken for residents' own; we report them as simulated.",
              "members": [team["member"]["X-Client-Id"]], "agents": [str(a.id) for a in team["agents"]],
              "query_types": ["focus_group"]},
        headers=team["pi"],
    )  # fmt: skip
    assert r.status_code == 201, r.text
    project = r.json()["id"]
    assert api.client.post(f"/v1/projects/{project}/membership", json={"accept": True},
                           headers=team["member"]).status_code == 200  # fmt: skip
    decision = {"approve": True, "note": "fine", "query_types": ["focus_group"], "quota": quota,
                "max_agents_per_job": 12}  # fmt: skip
    r = api.client.post(f"/v1/projects/{project}/decision", json=decision, headers=team["reviewer"])
    assert r.status_code == 200 and r.json()["status"] == "approved", r.text
    return project


def group_body(team, seats: int = 3, questions=("What is your first reaction?", "Who would use it?"),
               max_turns: int = 6, probes=()) -> dict[str, Any]:  # fmt: skip
    return {"kind": "focus_group", "seats": [str(a.id) for a in team["agents"][:seats]],
            "guide": {"topics": [{"title": "The plan", "questions": list(questions)}], "probes": list(probes),
                      "max_turns": max_turns, "probes_per_question": 1 if probes else 0},
            "stimulus": {"kind": "concept", "text": "A community garden on the lot beside the plant."}}  # fmt: skip


def submit(api, team, project, body, key: str = "group-1") -> uuid.UUID:
    r = api.client.post(f"/v1/projects/{project}/focus-groups", json=body,
                        headers={**team["member"], "Idempotency-Key": key})  # fmt: skip
    assert r.status_code == 202, r.text
    return uuid.UUID(r.json()["id"])
