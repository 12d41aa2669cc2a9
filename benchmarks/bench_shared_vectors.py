"""A worker's CPU per answering call with and without the shared vectors of item questions.

Several agents (the sample interview, stored once per agent) answer the same GSS items, one item
per call, with the local embedder and a chat model that answers at once, so what is measured is the
worker's own work per call: choosing each item's expert, retrieving from the agent's memory, building
the prompt and storing the answer. "Without" empties the cache before each agent, as each agent
re-embedded every question before; "with" keeps it. Before, each agent also embedded the joined
questions, a full 256-token window, once per expert; "without" leaves that out, so it is a lower
bound. The two alternate agent by agent, so a change in the machine's load falls on both. Agents
are built with a hashing embedder of the same width: their retrieval results mean nothing, their
cost is the same.

Run: python -m benchmarks.bench_shared_vectors [--agents 6] [--items 20]   (about ten seconds on two cores)
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from agentbank.building import shared_vectors
from agentbank.building.agents import BuildConfig
from agentbank.building.build import build_agent
from agentbank.building.ingest import parse_turns_json
from agentbank.building.transcripts import store_interview
from agentbank.consultation.answering.engine import AnswerEngine
from agentbank.core.settings import Settings
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.instruments import load_instrument
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import MemoryKeyStore
from agentbank.providers.embeddings import LocalMiniLMEmbedder
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel, echo_minimal
from benchmarks.common import machine, save
from migrations.runner import alembic_config, upgrade

SAMPLE = Path("../shared/data/transcripts/sample_interview/joon_park_sample_interview.json")


def _answer(engine: AnswerEngine, session: Session, *asked: Any) -> None:
    """The engine's round in one session: plan, make and store each call, release."""
    plan = engine.plan_survey(session, *asked)
    for call in plan.calls:
        engine.store(session, plan, call, engine.make(call))
    engine.release(session, plan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=6, help="agents per arm (alternated)")
    parser.add_argument("--items", type=int, default=20)
    args = parser.parse_args()
    settings = Settings()
    gss = load_instrument("gss", settings.reference_data_dir)
    items = list(gss.items)[: args.items]
    root = Path(tempfile.mkdtemp(prefix="agentbank-bench-"))
    server = start_embedded_server(root / "postgres")
    upgrade(alembic_config(server.url))
    keys = KeyRing("benchmark-secret-" * 3, MemoryKeyStore())
    chat, builder, embedder = ScriptedChatModel(echo_minimal), HashingEmbedder(384), LocalMiniLMEmbedder()
    per_call: dict[str, list[float]] = {"without": [], "with": []}
    try:
        with Session(create_engine(server.url)) as session:
            engine = AnswerEngine(
                chat=chat, embedder=embedder, keys=keys, memory_token_budget=settings.memory_token_budget
            )
            _answer(engine, session, *_agent(session, keys, chat, builder), gss, items[:1])  # loads the model
            for n in range(2 * args.agents):
                arm = ("without", "with")[n % 2]
                agent, participant = _agent(session, keys, chat, builder)
                if arm == "without":
                    shared_vectors._SHARED = shared_vectors.SharedVectors()
                began = time.process_time()  # every thread of this process: onnxruntime's included
                _answer(engine, session, agent, participant, gss, items)
                per_call[arm].append((time.process_time() - began) / len(items))
    finally:
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)
    figures = {
        arm: {"agents": len(values), "cpu_ms_per_call_median": round(1000 * statistics.median(values), 1)}
        for arm, values in per_call.items()
    }
    for arm, f in figures.items():
        print(f"{arm} the shared vectors: {f['cpu_ms_per_call_median']} ms CPU per call ({f['agents']} agents)")
    ratio = figures["without"]["cpu_ms_per_call_median"] / figures["with"]["cpu_ms_per_call_median"]
    figures["ratio"] = {"without_over_with": round(ratio, 2)}
    print(f"load average at the end: {machine()['load_average_1_5_15_min']}")
    print(f"figures in {save('shared-vectors', figures)}")
    print(f"CPU per call, without over with the shared vectors: {ratio:.2f}")


def _agent(session: Session, keys: KeyRing, chat: ScriptedChatModel, builder: HashingEmbedder):
    parsed = parse_turns_json(SAMPLE)
    participant = store_interview(session, replace(parsed, source_ref=f"{parsed.source_ref}#{uuid.uuid4()}"), keys)
    config = BuildConfig.of(chat, builder, 0)
    return build_agent(session, participant, chat=chat, embedder=builder, keys=keys, config=config), participant


if __name__ == "__main__":
    main()
