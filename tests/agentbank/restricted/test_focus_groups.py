"""A focus group on a scripted model: every utterance through the door and audited to its participant, a
withdrawal that removes its seat at once, an extraction attempt withheld as silence, and the dry run's price."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from agentbank.access.principals import Principal
from agentbank.audit import log as audit
from agentbank.core.settings import ModelPrice
from agentbank.db import transaction
from agentbank.db.models import Agent, AuditEvent, Client, FocusGroup, FocusGroupUtterance
from agentbank.participants.withdrawal import withdraw
from agentbank.restricted.groups.costs import estimate_group
from agentbank.restricted.groups.requests import FocusGroupRequest
from agentbank.restricted.groups.running import run_group
from agentbank.restricted.groups.storage import load_state
from tests.support.groups import GroupModel, approve_groups, group_body, group_team, submit


def run(api, team, group_id) -> None:
    run_group(api.bank.sessions, team["door"], team["embedder"], group_id)
    api.session.expire_all()


def events(api, action: str) -> list[AuditEvent]:
    return list(api.session.scalars(select(AuditEvent).where(AuditEvent.action == action).order_by(AuditEvent.id)))


def rows(api, group_id) -> list[FocusGroupUtterance]:
    return list(api.session.scalars(select(FocusGroupUtterance).where(FocusGroupUtterance.group_id == group_id)
                                    .order_by(FocusGroupUtterance.number)))  # fmt: skip


def test_every_utterance_passes_the_door_and_is_audited_to_its_participant(api):
    team = group_team(api)
    project = approve_groups(api, team)
    group_id = submit(api, team, project, group_body(team, seats=3))
    run(api, team, group_id)
    assert api.session.get_one(FocusGroup, group_id).status == "done"
    spoken = [r for r in rows(api, group_id) if r.kind == "agent"]
    assert len(spoken) == 6 and sorted(r.seat for r in spoken) == [1, 1, 2, 2, 3, 3]
    owner = {a.id: a.participant_id for a in team["agents"]}
    used = events(api, "focus_group.answer")
    assert len(used) == 6
    by_number = {e.details["utterance"]: e for e in used}
    for row in spoken:  # each utterance's event names the participant behind the agent that said it
        event = by_number[row.number]
        assert (event.agent_id, event.participant_id) == (row.agent_id, owner[row.agent_id])
        assert event.details["group_id"] == str(group_id) and event.details["released"] is True
    # The moderator's words are the guide's own; nothing an agent said is stored outside its sealed answers.
    guide = set(FocusGroupRequest.model_validate(group_body(team)).wording())
    asked = [r for r in rows(api, group_id) if r.kind == "moderator" and r.action in ("question", "probe")]
    assert asked and all(r.text in guide for r in asked)
    assert all(r.text is None for r in spoken)
    # An agent heard the others (its memory of the group), never another agent's interview.
    last = team["chat"].calls[-1]["messages"][0]["content"]
    assert "What you remember of the discussion so far" in last and "Seat 1:" in last


def test_a_withdrawal_mid_group_removes_that_seat_at_once(api):
    script = GroupModel()
    team = group_team(api, script=script)
    project = approve_groups(api, team)
    leaving = team["participants"][1]

    def leave() -> None:
        with transaction(api.bank.sessions) as session:
            withdraw(session, team["keys"], leaving.id, audit.Actor("participant", str(leaving.id)), ledger=None)

    script.on_moderator = {4: leave}  # after seats 1-3 answered the first question
    group_id = submit(api, team, project, group_body(team, seats=3))
    run(api, team, group_id)
    turns = rows(api, group_id)
    left = [r for r in turns if r.kind == "left"]
    assert len(left) == 1 and left[0].seat == 2
    after = [r for r in turns if r.number > left[0].number]
    assert all(r.seat != 2 for r in after if r.kind in ("agent", "silence", "moderator"))
    with transaction(api.bank.sessions) as session:
        state = load_state(session, team["keys"], group_id)
    assert state.seats[2][1] == "removed"
    said_by_2 = [s for s in state.spoken if s.kind == "agent" and s.seat == 2]
    assert said_by_2 and all(not s.readable and s.text is None for s in said_by_2)  # gone with the key
    agent_2 = team["agents"][1].id
    assert all(e.details["utterance"] < left[0].number for e in events(api, "focus_group.answer")
               if e.agent_id == agent_2)  # fmt: skip
    # Nobody heard seat 2 after it left: no later prompt holds its words.
    assert api.session.get_one(Agent, agent_2).status == "withdrawn"


def test_an_extraction_attempt_through_the_group_is_withheld_as_silence(api):
    team = group_team(api)
    project = approve_groups(api, team)
    body = group_body(team, seats=3, questions=("What is your lucky charm?",), max_turns=3)
    group_id = submit(api, team, project, body)
    run(api, team, group_id)
    silences = [r for r in rows(api, group_id) if r.kind == "silence"]
    assert len(silences) == 3 and all("canary" in r.reasons for r in silences)
    withheld = events(api, "output.withheld")
    assert len(withheld) == 3 and {e.participant_id for e in withheld} == {p.id for p in team["participants"][:3]}
    markers = [team["keys"].canary(a.id) for a in team["agents"][:3]]
    prompts = [c["messages"][0]["content"] for c in team["chat"].calls]
    for n, marker in enumerate(markers):  # each marker is in its own agent's prompts only, never heard by others
        holding = [p for p in prompts if marker in p]
        assert holding and all(f"You sit at Seat {n + 1}." in p for p in holding)
    assert any("stays silent" in p for p in prompts)


def test_the_dry_run_prices_each_round_and_asks_nothing(api, settings):
    team = group_team(api)
    project = approve_groups(api, team)
    body = FocusGroupRequest.model_validate(group_body(team, seats=4, max_turns=10, probes=("Say more?",)))
    priced = settings.model_copy(update={"chat_prices": {"scripted": ModelPrice(prompt=2.0, completion=8.0)}})
    client_id = team["member"]["X-Client-Id"]
    pk = api.session.scalars(select(Client.id).where(Client.client_id == client_id)).one()
    member = Principal("client", client_id, pk, frozenset({"individual:query"}))
    figures = estimate_group(api.session, api.bank.sessions, member, uuid.UUID(project), body, team["door"], priced)
    assert team["chat"].calls == []  # nothing asked
    rounds = figures["rounds"]
    assert [r["agent_turns"] for r in rounds] == [5, 5]  # four seats and one probe per question
    assert all(r["calls"] == 2 * r["agent_turns"] for r in rounds)  # the moderator's and the seat's
    assert figures["calls"] == 20 and sum(r["prompt_tokens"] for r in rounds) > 0
    evaluated = figures["prompt_tokens"] - figures["cached_tokens"]
    expected = (evaluated * 2.0 + figures["cached_tokens"] * 2.0 + figures["completion_tokens"] * 8.0) / 1e6
    assert figures["price"] == round(expected, 6) and figures["currency"] == "USD"
    assert events(api, "focus_group.estimate")
    print("per round:", rounds)
