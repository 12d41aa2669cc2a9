"""The sample interview through the real embedded models: build, survey, cache, open answer."""

from pathlib import Path

import pytest

from agentbank.building.agents import BuildConfig
from agentbank.building.build import build_agent
from agentbank.building.ingest import parse_turns_json
from agentbank.building.transcripts import store_interview
from agentbank.consultation.answering.engine import AnswerEngine
from agentbank.instruments import load_instrument, select_items
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import MemoryKeyStore
from agentbank.providers.embedded_llm import EmbeddedChatModel
from agentbank.providers.embeddings import LocalMiniLMEmbedder
from tests.support.rounds import answer_round, ask_round

# Worst case: four reflections and a persona, five items and one open answer, at their token limits.
pytestmark = [pytest.mark.slow, pytest.mark.model_budget(prompt_tokens=20_000, completion_tokens=16_000)]

SAMPLE = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "transcripts" / "sample_interview"
ITEMS = ["cappun", "gunlaw", "natenvir", "trust", "polviews"]


class Counting:
    """Counts the calls that reach the model."""

    def __init__(self, model):
        self.model, self.name, self.calls = model, model.name, 0

    def complete(self, request):
        self.calls += 1
        return self.model.complete(request)

    def close(self):
        self.model.close()


@pytest.fixture(scope="module")
def models():
    chat, embedder = Counting(EmbeddedChatModel(threads=2)), LocalMiniLMEmbedder()
    yield chat, embedder
    chat.close()


def test_sample_interview_agent_answers_gss_items(db, models):
    chat, embedder = models
    keys = KeyRing("k" * 40, MemoryKeyStore())
    participant = store_interview(db, parse_turns_json(SAMPLE / "joon_park_sample_interview.json"), keys)
    agent = build_agent(
        db, participant, chat=chat, embedder=embedder, keys=keys, config=BuildConfig.of(chat, embedder, 600)
    )
    gss = load_instrument("gss", Path("."))
    items = select_items(gss, ITEMS)
    engine = AnswerEngine(chat=chat, embedder=embedder, keys=keys, memory_token_budget=900)

    answers = answer_round(engine, db, agent, participant, gss, items)
    for answer, item in zip(answers, items, strict=True):
        assert answer.value in item.codes, (item.key, answer.value)
        p = answer.provenance
        assert p["model"] == "SmolLM2-135M-Instruct-Q4_1" and p["agent_version"] == 1
        assert p["item_version"] == item.version and p["prompt_version"].startswith("p-")
        assert p["condition"] == "interview" and p["condition_params"]["expert"] and p["seed"] == 0
        assert answer.usage.prompt_tokens > 0
    # Later items of the same expert reuse the prompt prefix from the model's cache.
    assert max(a.usage.cached_tokens for a in answers[1:]) > 500

    calls = chat.calls
    again = answer_round(engine, db, agent, participant, gss, items)
    assert chat.calls == calls and all(a.cached for a in again)
    assert [a.value for a in again] == [a.value for a in answers]

    open_answer = ask_round(engine, db, agent, participant, "Where did you grow up, and what did your parents do?")
    assert open_answer.value.strip()
    assert open_answer.cited_turns and all(1 <= t <= 227 for t in open_answer.cited_turns)
