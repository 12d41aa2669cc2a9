"""A team's items answered valid by construction: their schemas, the prompt's wording, and an answer that
names an option twice refused before it is stored (a model's grammar may not hold ``uniqueItems``)."""

from __future__ import annotations

import jsonschema
import pytest

from agentbank.consultation.answering.calls import Call
from agentbank.consultation.answering.conditions import Condition
from agentbank.consultation.answering.engine import AnswerEngine
from agentbank.consultation.answering.plans import Output, PendingCall
from agentbank.consultation.answering.schemas import answer_schema, describe_item, value_schema
from agentbank.core.errors import ProviderError
from agentbank.instruments.team import checked, to_instrument
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel, minimal_answer
from tests.support.factories import keyring

SPEC = checked({"title": "Town", "items": [
    {"key": "used", "type": "multiple", "question": "Which did you use?", "options": ["Library", "Bus", "Pool"]},
    {"key": "budget", "type": "ranking", "question": "Rank these.", "options": ["Roads", "Schools", "Parks"]},
    {"key": "trust", "type": "scale", "question": "Trust?", "low": 0, "high": 4, "low_label": "None",
     "high_label": "Full"},
]})  # fmt: skip
TOWN = to_instrument("town@1", SPEC, "test")


def test_list_answers_are_distinct_options_and_a_ranking_names_every_one():
    used, budget, trust = TOWN.items
    for item in (used, budget):
        jsonschema.validate(minimal_answer(value_schema(item)), value_schema(item))
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate([1, 1], value_schema(item))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([], value_schema(used))  # at least one
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([1, 2], value_schema(budget))  # every option
    assert [o.label for o in trust.options] == ["None", "1", "2", "3", "Full"]
    assert trust.labelled(0) == "None" and used.labelled([3, 1]) == ["Pool", "Library"]
    assert "every option's code once" in describe_item(budget) and "at least one" in describe_item(used)


def test_a_ranking_that_repeats_an_option_is_not_stored():
    budget = TOWN.item("budget")
    chat = ScriptedChatModel([{"reason": "r", "answer": [1, 1, 2]}])
    engine = AnswerEngine(chat=chat, embedder=HashingEmbedder(), keys=keyring(), memory_token_budget=400)
    # A schema without uniqueItems, as a grammar that ignores it would behave.
    schema = answer_schema(budget)
    del schema["properties"]["answer"]["uniqueItems"]
    call = PendingCall([{"role": "user", "content": "x"}], schema, {},
                       (Output("k", Call(Condition(), {}, 0, None), budget, 1),))  # fmt: skip
    with pytest.raises(ProviderError, match="named an option twice"):
        engine.make(call)
