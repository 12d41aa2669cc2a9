"""Open answers from a model that loops: the request asks for the first person and penalizes repeats,
and the answer kept stops before its first repeated sentence, at a sentence boundary."""

import pytest

from agentbank.consultation.answering.engine import AnswerEngine
from agentbank.consultation.answering.open_text import sentences, tidy_open_answer
from agentbank.providers.fakes import ScriptedChatModel
from tests.support.factories import build
from tests.support.rounds import ask_round

# What the embedded 135M model answered, word for word: one sentence again and again, cut mid-sentence.
LOOPING = (
    "I'm going to study engineering at a top medical school. I'm going to study music at a top medical "
    "school. I'm going to study art at a top medical school. I'm going to study at a"
)


def looping_model(_messages, schema):
    return {"answer": LOOPING, "cited_turns": schema["properties"]["cited_turns"]["items"]["enum"][:1]}


def test_a_looping_answer_is_kept_without_its_repeats_and_ends_cleanly(db):
    participant, agent, _chat, embedder, keys = build(db, turns=40)
    chat = ScriptedChatModel(looping_model)
    engine = AnswerEngine(chat=chat, embedder=embedder, keys=keys, memory_token_budget=400)

    answer = ask_round(engine, db, agent, participant, "What will you study?")
    assert answer.value == "I'm going to study engineering at a top medical school."
    said = sentences(answer.value)
    assert len(said) == len(set(said)) and answer.value.endswith(".")
    request = chat.calls[0]
    assert request["frequency_penalty"] > 0 and request["max_tokens"] > 0
    assert "first person" in request["messages"][1]["content"]
    # What is cached is what was shown.
    assert ask_round(engine, db, agent, participant, "What will you study?").value == answer.value


@pytest.mark.parametrize(
    ("raw", "limit", "kept"),
    [
        ("I grew up on a farm. We had cows.", 900, "I grew up on a farm. We had cows."),
        ("I grew up on a farm. We had cows and", 36, "I grew up on a farm."),  # cut off at its limit
        ("I grew up on a farm and we had", 30, "I grew up on a farm and we had…"),  # not one whole sentence
        ("I grew up on a farm. We had cows and", 900, "I grew up on a farm. We had cows and"),  # as written
        ("Yes! Yes! Yes! I liked it.", 900, "Yes! Yes! Yes! I liked it."),  # short sentences may recur
        ('I said "no." I moved to the city. I moved to the big city. I', 900, 'I said "no." I moved to the city.'),
    ],
)
def test_tidy_open_answer(raw, limit, kept):
    assert tidy_open_answer(raw, limit) == kept
