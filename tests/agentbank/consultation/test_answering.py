"""Answering with the scripted model on the real database: experts, prefixes, cache, conditions."""

import itertools
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import select, text

from agentbank.consultation.answering import Condition
from agentbank.consultation.answering.conditions import InvalidConditionError
from agentbank.consultation.answering.engine import AnswerEngine
from agentbank.db.models import AnswerRecord
from agentbank.instruments import load_instrument, select_items
from agentbank.providers.fakes import ScriptedChatModel
from tests.support.factories import build, responder
from tests.support.rounds import answer_round, ask_round

GSS = load_instrument("gss", Path("."))
GAMES = load_instrument("games", Path("."))


@pytest.fixture
def bank(db):
    participant, agent, chat, embedder, keys = build(db, turns=40)
    engine = AnswerEngine(chat=chat, embedder=embedder, keys=keys, memory_token_budget=400)
    chat.calls.clear()
    return engine, participant, agent, chat


def test_answers_are_valid_codes_with_complete_provenance(db, bank):
    engine, participant, agent, chat = bank
    items = select_items(GSS, ["cappun", "polviews", "natenvir"])
    answers = answer_round(engine, db, agent, participant, GSS, items)
    assert [a.value in item.codes for a, item in zip(answers, items, strict=True)] == [True] * 3
    for answer, item in zip(answers, items, strict=True):
        p = answer.provenance
        assert p["agent_version"] == agent.version and p["item_version"] == item.version
        assert p["model"] == "scripted" and p["prompt_version"].startswith("p-")
        assert p["condition"] == "interview" and p["condition_params"]["expert"]
        assert p["sampling"]["temperature"] == 0.0 and p["seed"] == 0 and len(p["cache_key"]) == 64
        assert answer.usage.prompt_tokens > 0 and not answer.cached


def test_asking_again_makes_no_model_call(db, bank):
    engine, participant, agent, chat = bank
    items = select_items(GSS, ["cappun", "gunlaw"])
    first = answer_round(engine, db, agent, participant, GSS, items)
    calls = len(chat.calls)
    again = answer_round(engine, db, agent, participant, GSS, items)
    assert len(chat.calls) == calls
    assert [a.value for a in again] == [a.value for a in first] and all(a.cached for a in again)


def test_expert_choice_follows_the_item(db, bank):
    engine, participant, agent, chat = bank
    expert = engine._chooser.choose
    assert expert(GSS.item("cappun").question) == "political_scientist"
    assert expert("How happy are you with your marriage and family life?") == "psychologist"
    assert expert(GAMES.item("dictator").question, GAMES.item("dictator").meta["expert"]) == "economist"
    answers = answer_round(engine, db, agent, participant, GAMES, list(GAMES.items))
    assert {a.provenance["condition_params"]["expert"] for a in answers} == {"economist"}
    assert all(0 <= a.value <= 9 for a in answers[:4])


def test_prefix_is_byte_identical_across_items_of_one_expert(db, bank):
    engine, participant, agent, chat = bank
    items = select_items(GSS, ["cappun", "gunlaw", "grass", "courts", "natenvir", "happy"])
    answers = answer_round(engine, db, agent, participant, GSS, items)
    expert_of = {a.target: a.provenance["condition_params"]["expert"] for a in answers}
    # Calls are grouped by expert, and within a group everything before the item is byte-identical.
    called = [c["messages"][1]["content"].split(":")[0].lower() for c in chat.calls]
    experts_in_call_order = [expert_of[key] for key in called]
    assert experts_in_call_order == sorted(experts_in_call_order, key=experts_in_call_order.index)
    by_expert: dict[str, set[str]] = {}
    for call, key in zip(chat.calls, called, strict=True):
        by_expert.setdefault(expert_of[key], set()).add(call["messages"][0]["content"])
    assert all(len(systems) == 1 for systems in by_expert.values())
    assert len({s for systems in by_expert.values() for s in systems}) == len(by_expert)
    system = next(iter(by_expert[expert_of["cappun"]]))
    assert system.index("## Interview") < system.index("## Notes by a political scientist") < system.index("## General")
    # The scripted model counts a shared prefix as cached, like llama.cpp's prefix cache.
    records = db.scalars(select(AnswerRecord).order_by(AnswerRecord.id)).all()
    assert records[0].cached_tokens < 5  # only the role marker matches the build's last prompt
    same_expert_repeats = [
        r.cached_tokens for prev, r in itertools.pairwise(records)
        if prev.condition_params["expert"] == r.condition_params["expert"]
    ]  # fmt: skip
    assert same_expert_repeats and all(c > 200 for c in same_expert_repeats)


def test_several_items_per_call(db, bank):
    engine, participant, agent, chat = bank
    # The games share one expert, so all five go into one call.
    answers = answer_round(engine, db, agent, participant, GAMES, list(GAMES.items), items_per_call=5)
    assert len(chat.calls) == 1
    asked = chat.calls[0]["schema"]["required"]
    assert sorted(asked) == sorted(i.key for i in GAMES.items)
    assert all(a.provenance["sampling"]["items_per_call"] == 5 for a in answers)
    # The order within the call is shuffled with a seed of the agent's own, and each answer records
    # where its item stood, so the order can be reproduced and position told apart from the person.
    positions = {a.target: a.provenance["sampling"]["position"] for a in answers}
    assert [key for key, _ in sorted(positions.items(), key=lambda kv: kv[1])] == asked
    assert len({a.provenance["sampling"]["order_seed"] for a in answers}) == 1
    assert sum(a.usage.prompt_tokens for a in answers) == len(chat._previous)  # the call's tokens, shared out


def test_cache_key_changes_with_every_part(bank, monkeypatch):
    engine, participant, agent, chat = bank
    item = GSS.item("cappun")
    cipher = engine._keys.cipher(participant.id, participant.wrapped_key)

    def key(agent=agent, version=item.version, condition=None, temperature=0.0, seed=0):
        target = {"item": item.key, "version": version}
        return engine._key(agent, target, condition or Condition(), cipher, {"temperature": temperature}, seed)

    base = key()
    variants = {
        "seed": key(seed=1),
        "sampling": key(temperature=0.7),
        "item version": key(version="other"),
        "condition": key(condition=Condition("persona")),
        "condition params": key(condition=Condition("ablated", fraction=0.2)),
        "agent version": key(agent=SimpleNamespace(id=agent.id, version=agent.version + 1)),
    }
    monkeypatch.setattr(chat, "name", "another-model")
    variants["model"] = key()
    monkeypatch.undo()
    monkeypatch.setattr("agentbank.consultation.answering.engine.prompt_version", lambda: "p-other")
    variants["prompt version"] = key()
    assert [name for name, value in variants.items() if value == base] == []
    assert len(set(variants.values())) == len(variants)


def test_open_ended_answer_cites_shown_turns(db, bank):
    engine, participant, agent, chat = bank
    answer = ask_round(engine, db, agent, participant, "What was your childhood like on the farm?")
    assert answer.value == "I grew up on a farm." and answer.cited_turns
    shown = chat.calls[0]["messages"][0]["content"]
    assert all(f"[{turn}] " in shown for turn in answer.cited_turns)
    assert ask_round(engine, db, agent, participant, "What was your childhood like on the farm?").cached


def test_conditions_shape_the_prompt(db, bank):
    engine, participant, agent, chat = bank
    item = [GSS.item("cappun")]
    answer_round(engine, db, agent, participant, GSS, item, Condition("demographic"))
    demographic = chat.calls[-1]["messages"][0]["content"]
    assert "## Interview" not in demographic and "female" in demographic and "61 years old" in demographic
    answer_round(engine, db, agent, participant, GSS, item, Condition("persona"))
    assert "retired machinist" in chat.calls[-1]["messages"][0]["content"]
    answer_round(engine, db, agent, participant, GSS, item, Condition("survey", answers={"cappun": 2, "gunlaw": 1}))
    survey = chat.calls[-1]["messages"][0]["content"]
    assert "favor or oppose gun permits: favor" in survey  # the codebook's short description and the label
    assert "death penalty" not in survey  # the item asked is held out
    # The cache key names exactly what the agent was shown: the held-out answer makes no difference.
    before = len(chat.calls)
    answer_round(engine, db, agent, participant, GSS, item, Condition("survey", answers={"gunlaw": 1}))
    assert len(chat.calls) == before
    with pytest.raises(InvalidConditionError):  # nothing left to show once the asked item is held out
        answer_round(engine, db, agent, participant, GSS, item, Condition("survey", answers={"cappun": 2}))
    answer_round(engine, db, agent, participant, GSS, item, Condition("ablated", fraction=0.5, seed=3))
    ablated = chat.calls[-1]["messages"][0]["content"]
    assert "## Notes by" not in ablated and "## Interview" in ablated
    with pytest.raises(InvalidConditionError):
        Condition("ablated")
    with pytest.raises(InvalidConditionError):
        Condition("telepathy")


def test_cached_answers_hold_no_plaintext(db, bank):
    engine, participant, agent, chat = bank
    ask_round(engine, db, agent, participant, "What is your secret word?")
    hits = db.execute(
        text("SELECT count(*) FROM answers WHERE position(:n in payload_encrypted) > 0"), {"n": b"farm"}
    ).scalar_one()
    assert hits == 0


def test_invalid_model_output_is_an_error_not_a_guess(db):
    bad = ScriptedChatModel(
        lambda m, s: {"reason": "x", "answer": 9} if s and "answer" in s["properties"] else responder(m, s)
    )
    participant, agent, chat, embedder, keys = build(db, chat=bad)
    engine = AnswerEngine(chat=bad, embedder=embedder, keys=keys, memory_token_budget=400)
    with pytest.raises(Exception, match="schema"):
        answer_round(engine, db, agent, participant, GSS, [GSS.item("cappun")])


def test_answers_without_reasons_ask_for_codes_only(db, bank):
    engine, participant, agent, chat = bank
    items = [GSS.item("cappun"), GSS.item("gunlaw")]
    demographic = Condition("demographic")
    brief = answer_round(engine, db, agent, participant, GSS, items, demographic, items_per_call=2, reasons=False)
    schema = chat.calls[-1]["schema"]
    assert schema["properties"]["cappun"] == {"type": "integer", "enum": [1, 2]}  # the bare code
    assert "only the option code" in chat.calls[-1]["messages"][1]["content"]
    assert all(a.reason == "" and a.value in (1, 2) for a in brief)
    calls = len(chat.calls)
    full = answer_round(engine, db, agent, participant, GSS, items, Condition("demographic"), items_per_call=2)
    assert len(chat.calls) == calls + 1, "answers with reasons are cached apart from answers without"
    assert "reason" in chat.calls[-1]["schema"]["properties"]["cappun"]["properties"]
    assert not any(a.cached for a in full)
