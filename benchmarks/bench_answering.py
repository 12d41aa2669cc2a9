"""Cost of answering: one agent (the sample interview) answers 20 GSS items three ways.

(a) one item per call, items grouped by expert so the prompt prefix is reused from the model's cache;
(b) five items per call; (c) naively, the item placed before the agent's context, so the whole prompt
is evaluated for every item (the layout of genagents). Prints prompt tokens evaluated, cached tokens
and seconds per item.

Run: python -m benchmarks.bench_answering [--quick]   (uses ../shared/data, the embedded models, a temporary
database; ``--quick``: five items on the interview's first turns, a smoke run of a few minutes)
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from agentbank.building.agents import BuildConfig
from agentbank.building.build import build_agent
from agentbank.building.ingest import parse_turns_json
from agentbank.building.transcripts import store_interview
from agentbank.consultation.answering.engine import AnswerEngine
from agentbank.consultation.door import AgentDoor, Grant
from agentbank.core.settings import Settings
from agentbank.db import make_sessionmaker, transaction
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.instruments import load_instrument, select_items
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import MemoryKeyStore
from agentbank.providers.chat import ChatRequest, Message, Usage
from agentbank.providers.embedded_llm import EmbeddedChatModel
from agentbank.providers.embeddings import LocalMiniLMEmbedder
from benchmarks.common import save
from migrations.runner import alembic_config, upgrade

SAMPLE = Path("../shared/data/transcripts/sample_interview/joon_park_sample_interview.json")
ITEMS = (
    "cappun gunlaw grass abany natenvir natheal natcrime nateduc natrace natfare "
    "trust fair helpful happy polviews courts prayer fepresch letdie1 homosex"
).split()
FLUSH: list[Message] = [{"role": "user", "content": "Say hello."}]
NAIVE_SEED = 1
QUICK_TURNS = 24


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="five items and a short interview: a smoke run")
    args = parser.parse_args()
    console = Console()
    settings = Settings()
    root = Path(tempfile.mkdtemp(prefix="agentbank-bench-"))
    server = start_embedded_server(root / "postgres")
    upgrade(alembic_config(server.url))
    chat, embedder = EmbeddedChatModel(threads=settings.embedded_threads), LocalMiniLMEmbedder()
    keys = KeyRing("benchmark-secret-" * 3, MemoryKeyStore())
    gss = load_instrument("gss", settings.reference_data_dir)
    items = select_items(gss, ITEMS[:5] if args.quick else ITEMS)
    interview = parse_turns_json(SAMPLE)
    if args.quick:
        interview = replace(interview, turns=interview.turns[:QUICK_TURNS])
    figures: dict[str, dict[str, float]] = {}
    engine_ = create_engine(server.url)
    sessions = make_sessionmaker(engine_)
    try:
        with transaction(sessions) as session:
            participant = store_interview(session, interview, keys)
            began = time.perf_counter()
            config = BuildConfig.of(chat, embedder, settings.reflection_word_budget)
            agent = build_agent(session, participant, chat=chat, embedder=embedder, keys=keys, config=config)
            figures["build"] = {"seconds": time.perf_counter() - began, **agent.build["usage"]}
        door = AgentDoor(chat=chat, embedder=embedder, keys=keys, memory_token_budget=settings.memory_token_budget)
        grant = Grant.operator("measuring the answering speed", "benchmark")
        for label, per_call in [("a_one_item_per_call", 1), ("b_five_items_per_call", 5)]:
            chat.complete(ChatRequest(FLUSH, max_tokens=4))
            began = time.perf_counter()
            answers = door.survey(sessions, grant, agent.id, gss, items, items_per_call=per_call).answers
            total = sum((a.usage for a in answers), Usage())
            figures[label] = _per_item(total, time.perf_counter() - began, len(items))
        chat.complete(ChatRequest(FLUSH, max_tokens=4))
        # The naive prompt is built from the engine's own parts, so it is compared like for like.
        engine = AnswerEngine(chat=chat, embedder=embedder, keys=keys, memory_token_budget=settings.memory_token_budget)
        with transaction(sessions) as session:
            figures["c_naive_whole_prompt"] = _naive(engine, session, agent, participant, gss, items, chat)
    finally:
        chat.close()
        engine_.dispose()
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)

    table = Table("mode", "prompt tokens evaluated / item", "cached tokens / item", "completion / item", "s / item")
    for label in ("a_one_item_per_call", "b_five_items_per_call", "c_naive_whole_prompt"):
        f = figures[label]
        table.add_row(
            label, f"{f['evaluated']:.0f}", f"{f['cached']:.0f}", f"{f['completion']:.0f}", f"{f['seconds']:.2f}"
        )
    console.print(table)
    console.print(f"build: {figures['build']['seconds']:.1f} s")
    if not args.quick:  # a smoke run's figures are not kept
        console.print(f"saved to {save('answering', figures)}")


def _per_item(usage: Usage, seconds: float, n: int) -> dict[str, float]:
    return {
        "evaluated": usage.evaluated_prompt_tokens / n,
        "cached": usage.cached_tokens / n,
        "completion": usage.completion_tokens / n,
        "seconds": seconds / n,
    }


def _naive(engine: AnswerEngine, session: Session, agent, participant, gss, items, chat) -> dict[str, float]:
    """The same prompts as (a), but each item placed before the agent's context, so no two prompts share
    a prefix. A seed of its own gives answers of their own, so nothing comes from the cache."""
    plan = engine.plan_survey(session, agent, participant, gss, items, seed=NAIVE_SEED)
    total, began = Usage(), time.perf_counter()
    for call in plan.calls:
        system, user = call.messages[0]["content"], call.messages[1]["content"]
        asked, instruction = user.rsplit("\n\n", 1)
        messages: list[Message] = [
            {"role": "system", "content": f"{asked}\n\n{system}"},
            {"role": "user", "content": instruction},
        ]
        total += chat.complete(ChatRequest(messages, schema=call.schema, **call.options)).usage
    return _per_item(total, time.perf_counter() - began, len(plan.calls))


if __name__ == "__main__":
    main()
