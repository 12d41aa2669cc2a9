"""A published two-step experiment answered by the real embedded chat model: every answer valid, the
second step shown the first and the agent's own answer, the report written."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine

from agentbank.consultation.door import AgentDoor
from agentbank.db import make_sessionmaker, transaction
from agentbank.providers.embedded_llm import EmbeddedChatModel
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel
from agentbank.restricted.experiments import EXPERIMENTS
from evaluation.experiments.runs import ExperimentConfig, opened_rows
from evaluation.experiments.service import REPORT, run_experiment_set
from tests.support.factories import build, responder

# Two agents × (two steps and two probes), unblinded, each call at most a short interview and 650 tokens.
pytestmark = [pytest.mark.slow, pytest.mark.model_budget(prompt_tokens=16_000, completion_tokens=6_000)]


class Recording:
    """The real model, keeping each request's messages."""

    def __init__(self, model: EmbeddedChatModel) -> None:
        self.model, self.name, self.messages = model, model.name, []

    def complete(self, request: Any) -> Any:
        self.messages.append(list(request.messages))
        return self.model.complete(request)

    def close(self) -> None:
        self.model.close()


@pytest.fixture
def sessions(fresh_database: str) -> Iterator[Any]:
    engine = create_engine(fresh_database)
    yield make_sessionmaker(engine)
    engine.dispose()


def test_schilke_on_the_embedded_model(sessions, tmp_path):
    embedder = HashingEmbedder()
    with transaction(sessions) as session:
        keys = None
        for n in range(2):  # built with the scripted model: only the experiment's answers are the real model's
            *_, keys = build(session, ref=f"file:real-{n}.json", turns=6, chat=ScriptedChatModel(responder),
                             embedder=embedder, keys=keys)  # fmt: skip
    chat = Recording(EmbeddedChatModel(threads=2))
    try:
        door = AgentDoor(chat=chat, embedder=embedder, keys=keys, memory_token_budget=600)
        config = ExperimentConfig(("schilke",), ("interview",), ("unblinded",))
        outcome = run_experiment_set(door, sessions, chat.name, config, tmp_path)
    finally:
        chat.close()
    schilke = EXPERIMENTS["schilke"]
    trials = opened_rows(outcome.store, sessions, keys)
    assert len(trials) == 2 and all(t.available for t in trials)
    for trial in trials:
        (arm,) = trial.arms
        for item in schilke.outcomes:
            assert trial.outcomes[arm][item.key] in item.codes
        for probe in schilke.probes:
            assert trial.probes[arm][probe.key] in probe.codes
    second_steps = [m for m in chat.messages if m[-1]["content"].startswith("TRUST")]
    assert len(second_steps) == 2 and all("You answered:" in m[0]["content"] for m in second_steps)
    assert "Power and trust" in (outcome.store.path / REPORT).read_text()
