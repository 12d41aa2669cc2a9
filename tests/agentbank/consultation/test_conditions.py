"""The conditions registry, and that no condition ever shows the model the answer it is asked for."""

from __future__ import annotations

import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import select

from agentbank.building.transcripts import open_demographics, seal_demographics
from agentbank.consultation.answering import Condition
from agentbank.consultation.answering.calls import order_seed as _order_seed
from agentbank.consultation.answering.calls import shuffled as _shuffled
from agentbank.consultation.answering.conditions import CONDITIONS, InvalidConditionError, demographic_line, unit_of
from agentbank.consultation.answering.engine import AnswerEngine
from agentbank.db.models import AnswerRecord
from agentbank.instruments import load_instrument
from agentbank.providers.fakes import ScriptedChatModel
from tests.support.factories import build, keyring
from tests.support.leaks import leak_detector, stated
from tests.support.rounds import answer_round

GSS = load_instrument("gss", Path("."))
# The person's own answers, none of them an item's first code: a model that falls back to the first
# code is right only when it read the answer in its prompt.
TRUTH = {"polviews": 6, "partyid": 5, "cappun": 2}
PARAMS: dict[str, dict[str, Any]] = {
    "ablated": {"fraction": 0.3, "seed": 1},
    "survey": {"answers": {**TRUTH, "gunlaw": 1, "grass": 2}},
    "interview-survey": {"answers": {**TRUTH, "gunlaw": 1, "grass": 2}},
}


@pytest.fixture
def bank(db):
    chat = ScriptedChatModel(leak_detector)
    participant, agent, chat, embedder, keys = build(db, turns=8, chat=chat)
    cipher = keys.cipher(participant.id, participant.wrapped_key)
    known = open_demographics(participant, cipher)
    seal_demographics(participant, cipher, {**known, "polviews": 6, "partyid": 5, "degree": 3})
    db.flush()
    engine = AnswerEngine(chat=chat, embedder=embedder, keys=keys, memory_token_budget=400)
    return engine, participant, agent, chat


def test_the_detector_finds_an_answer_that_is_in_the_prompt():
    line = demographic_line({"polviews": 6, "partyid": 5, "sex": 2}, GSS)
    assert stated(line, "polviews") == 6 and stated(line, "partyid") == 5
    assert stated(demographic_line({"polviews": 6, "sex": 2}, GSS, withheld={"polviews"}), "polviews") is None


@pytest.mark.parametrize("name", CONDITIONS)
@pytest.mark.parametrize("per_call", [1, 3])
def test_no_condition_shows_an_asked_item(db, bank, name, per_call):
    engine, participant, agent, chat = bank
    items = [GSS.item(k) for k in TRUTH]
    condition = Condition(name, **PARAMS.get(name, {}))
    answers = answer_round(engine, db, agent, participant, GSS, items, condition, items_per_call=per_call)
    assert chat.calls, "the model was asked"
    for call in chat.calls:
        system = call["messages"][0]["content"]
        assert all(stated(system, key) is None for key in TRUTH), f"{name} showed an asked item"
    assert {a.target: a.value for a in answers} == {k: GSS.item(k).codes[0] for k in TRUTH}


def test_withheld_items_stay_out_of_later_calls(db, bank):
    """The evaluation withholds every item of a run, so a call about one item never states another."""
    engine, participant, agent, chat = bank
    condition = Condition("demographic", withheld=frozenset({"polviews", "partyid"}))
    answer_round(engine, db, agent, participant, GSS, [GSS.item("gunlaw")], condition)
    system = chat.calls[-1]["messages"][0]["content"]
    assert stated(system, "polviews") is None and stated(system, "partyid") is None
    assert "female" in system  # the rest of the line is still there
    answer_round(engine, db, agent, participant, GSS, [GSS.item("gunlaw")], Condition("demographic"))
    assert stated(chat.calls[-1]["messages"][0]["content"], "polviews") == 6  # the detector is live


def test_registry_units_say_what_they_need():
    assert CONDITIONS == ("interview", "ablated", "demographic", "persona", "survey", "interview-survey")
    assert [n for n in CONDITIONS if unit_of(n).shows_turns] == ["interview", "ablated", "interview-survey"]
    assert [n for n in CONDITIONS if unit_of(n).uses_experts] == ["interview"]
    assert [n for n in CONDITIONS if unit_of(n).bank_agent] == ["interview", "ablated", "persona"]
    with pytest.raises(InvalidConditionError, match="choose one of interview"):
        Condition("telepathy")
    # Cache keys: conditions that state nothing of the withheld items keep the keys they had.
    assert Condition("persona").holding_out({"polviews"}).params() == {}
    assert Condition("demographic").holding_out({"cappun"}).params() == {}
    assert Condition("demographic").holding_out({"POLVIEWS"}).params() == {"withheld": ["polviews"]}


def test_item_order_is_seeded_per_person():
    items = [GSS.item(k) for k in ("cappun", "gunlaw", "grass", "courts", "natenvir", "happy", "trust")]
    a, b = SimpleNamespace(id=uuid.UUID(int=1)), SimpleNamespace(id=uuid.UUID(int=2))
    first = _shuffled(items, _order_seed(a, 0))  # type: ignore[arg-type]
    assert first == _shuffled(items, _order_seed(a, 0))  # type: ignore[arg-type]
    assert first != _shuffled(items, _order_seed(b, 0))  # type: ignore[arg-type]
    assert sorted(i.key for i in first) == sorted(i.key for i in items)


def test_a_persons_own_answers_are_recorded_only_as_a_keyed_digest(db, bank):
    """The survey condition shows the agent its person's answers: the answer record and its cache key hold
    a digest keyed with the person's data key, never the answers (which an unkeyed digest would let anyone
    guess back, item by item)."""
    engine, participant, agent, _ = bank
    condition = Condition("survey", **PARAMS["survey"]).holding_out({"cappun"})
    answer_round(engine, db, agent, participant, GSS, [GSS.item("cappun")], condition)
    record = db.scalars(select(AnswerRecord).where(AnswerRecord.agent_id == agent.id,
                                                   AnswerRecord.condition == "survey")).one()  # fmt: skip
    assert isinstance(record.condition_params["answers"], str) and len(record.condition_params["answers"]) == 64
    assert "polviews" not in str(record.condition_params) and "grass" not in str(record.condition_params)
    # The same answers under another person's key give another digest: nothing to precompute or compare.
    keys = keyring()
    mine = keys.cipher(participant.id, participant.wrapped_key)
    _, theirs = keys.new_key(uuid.uuid4())
    assert condition.recorded(mine) == condition.recorded(mine) != condition.recorded(theirs)


def test_interview_and_survey_together_and_the_survey_shape_without_an_interview(db, bank):
    """Park et al.'s best condition shows the interview and the person's other answers, never the asked one;
    an agent without an interview (a survey respondent) gets exactly the survey condition's section."""
    engine, participant, agent, chat = bank
    shown = {"gunlaw": 1, "grass": 2, "cappun": 2}
    condition = Condition("interview-survey", answers=shown).holding_out({"cappun"})
    answer_round(engine, db, agent, participant, GSS, [GSS.item("cappun")], condition)
    system = chat.calls[-1]["messages"][0]["content"]
    assert "## Interview (numbered turns)" in system and "## This person's answers to other questions" in system
    assert stated(system, "gunlaw") == 1 and stated(system, "cappun") is None
    sources = SimpleNamespace(instrument=GSS, turns=lambda: [], fit=lambda turns: turns)
    alone = Condition("interview-survey", answers=shown).holding_out({"cappun"})
    survey = Condition("survey", answers=shown).holding_out({"cappun"})
    assert alone.unit.section(alone, sources, None) == survey.unit.section(survey, sources, None)  # type: ignore[arg-type]
