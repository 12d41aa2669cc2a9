"""Texts that are the same for every agent are embedded once per process; participant text never is."""

from collections import Counter
from pathlib import Path

import numpy as np

from agentbank.building import shared_vectors
from agentbank.building.shared_vectors import RETRIEVAL, SharedVectors, query_vector, shared_texts
from agentbank.building.transcripts import load_turns
from agentbank.consultation.answering.engine import AnswerEngine
from agentbank.instruments import load_instrument, select_items
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel
from tests.support.factories import build, keyring, responder
from tests.support.rounds import answer_round, ask_round

GSS = load_instrument("gss", Path("."))
ITEMS = ["cappun", "polviews", "natenvir", "happy"]
# Long items (about 410 words together) that share no word with the test interview nor the death penalty.
UNRELATED = ["divorce", "race", "vote12", "spkath", "colrac", "denom", "prayer", "racopen", "wrkwayup", "happy"]
UNRELATED += ["helpful", "trust"]


class Counting:
    """An embedder that records every text it is asked to embed."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.dimension = inner, inner.name, inner.dimension
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts += list(texts)
        return self.inner.embed(texts)

    def close(self) -> None:
        pass


class Windowed(HashingEmbedder):
    """Reads only the first ``words`` words of a text, as a real embedder reads its first 256 tokens."""

    def __init__(self, words: int) -> None:
        super().__init__()
        self.words = words

    def embed(self, texts):
        return super().embed([" ".join(t.split()[: self.words]) for t in texts])


def test_each_question_is_embedded_once_for_every_agent_and_no_transcript_text(db):
    embedder = Counting(HashingEmbedder())
    keys = keyring()
    people = [build(db, ref=f"file:p{n}.json", turns=40, embedder=HashingEmbedder(), keys=keys) for n in range(3)]
    engine = AnswerEngine(chat=ScriptedChatModel(responder), embedder=embedder, keys=keys, memory_token_budget=400)
    items = select_items(GSS, ITEMS)
    for participant, agent, *_ in people:
        assert len(answer_round(engine, db, agent, participant, GSS, items)) == len(items)

    questions = {item.question for item in items}
    counts = Counter(t for t in embedder.texts if t in questions)
    # Each item once, for choosing its expert and for retrieval alike, however many agents answer it.
    assert counts == Counter(questions)
    # The rest are the experts' own descriptions; nothing a participant said is ever embedded here.
    assert not any("In part" in t or "farm" in t for t in embedder.texts)


def test_the_last_of_many_items_steers_retrieval_too():
    embedder = Windowed(words=30)
    items = [f"How much do you trust institution number {n} in this country today?" for n in range(12)]
    items.append("How often do you play the saxophone with your jazz band?")
    jazz = embedder.embed(["On weekends I play the saxophone in a jazz band."])[0]
    other = embedder.embed(["I trust the institutions of this country today."])[0]

    joined = embedder.embed([" ".join(items)])[0]  # one text: cut at the window, the last item unread
    assert float(joined @ jazz) <= 0.0
    query = query_vector(embedder, items)
    assert float(query @ jazz) > 0.0 and float(query @ other) > 0.0
    assert np.isclose(np.linalg.norm(query), 1.0)


def test_the_last_of_many_items_steers_what_the_agent_is_shown(db):
    # Twelve items come first (far past a 256-token window together), the one the interview speaks
    # to last. The agent's memory is larger than the budget, so retrieval chooses what it is shown.
    items = select_items(GSS, [*UNRELATED, "cappun"])
    said = " ".join(["I oppose the death penalty for persons convicted of murder."] * 15)
    participant, agent, chat, _, keys = build(db, turns=40, extra=said)  # chunks embedded whole
    engine = AnswerEngine(chat=chat, embedder=Windowed(words=190), keys=keys, memory_token_budget=400)
    chat.calls.clear()
    answer_round(engine, db, agent, participant, GSS, items)

    systems = {call["messages"][0]["content"] for call in chat.calls}
    # A query that joined the items' texts was cut inside the first items, which match no turn: the
    # agent was shown the beginning of its interview, never the turn about the death penalty.
    assert systems and all("death penalty for persons convicted" in system for system in systems)


def test_no_participant_text_enters_the_shared_vectors(db, monkeypatch):
    monkeypatch.setattr(shared_vectors, "_SHARED", SharedVectors())
    embedder, keys = HashingEmbedder(), keyring()
    # The same embedder builds the agents (their chunks and notes) and answers for them.
    people = [build(db, ref=f"file:q{n}.json", turns=40, embedder=embedder, keys=keys) for n in range(2)]
    engine = AnswerEngine(chat=ScriptedChatModel(responder), embedder=embedder, keys=keys, memory_token_budget=400)
    items = select_items(GSS, ITEMS)
    for participant, agent, *_ in people:
        answer_round(engine, db, agent, participant, GSS, items)
        ask_round(engine, db, agent, participant, "What do you do on weekends?")

    held = set(shared_texts(embedder))
    assert held == {item.question for item in items} | {"What do you do on weekends?"}
    for participant, agent, *_ in people:
        cipher = keys.cipher(participant.id, participant.wrapped_key)
        said = {turn.text for turn in load_turns(db, agent.transcript_id, cipher)}
        assert said and not any(turn in text for turn in said for text in held)


def test_the_cache_is_bounded_and_kept_per_embedder():
    cache = SharedVectors(capacity=3)
    first, second = Counting(HashingEmbedder()), Counting(HashingEmbedder())
    cache.embed(first, ["a b", "c d"])
    cache.embed(first, ["a b", "e f", "g h"])  # "a b" is found; two new, and the oldest ("c d") goes
    assert first.texts == ["a b", "c d", "e f", "g h"]
    cache.embed(first, ["c d"])
    assert first.texts[-1] == "c d"
    cache.embed(second, ["a b"])  # another model: its own vectors
    assert second.texts == ["a b"]
    assert cache.embed(first, []).shape == (0, first.dimension)
    # Each vector held owns its memory: a view would keep its whole batch alive past the bound.
    assert all(vector.base is None for vector in cache._by_embedder[first].values())


def test_a_new_way_of_choosing_the_memory_shown_gets_new_answers(db, monkeypatch):
    participant, agent, chat, embedder, keys = build(db, turns=40)
    engine = AnswerEngine(chat=chat, embedder=embedder, keys=keys, memory_token_budget=400)
    items = select_items(GSS, ITEMS[:2])
    first = answer_round(engine, db, agent, participant, GSS, items)
    assert {a.provenance["sampling"]["retrieval"] for a in first} == {RETRIEVAL}
    calls = len(chat.calls)
    assert all(a.cached for a in answer_round(engine, db, agent, participant, GSS, items))
    monkeypatch.setattr("agentbank.consultation.answering.engine.RETRIEVAL", "another-way")
    again = answer_round(engine, db, agent, participant, GSS, items)
    assert not any(a.cached for a in again) and len(chat.calls) > calls
