"""Cost of answering: one agent (the sample interview) answers 20 GSS items three ways.

(a) one item per call, items grouped by expert so the prompt prefix is reused from the model's cache;
(b) five items per call; (c) naively, the item placed before the agent's context, so the whole prompt
is evaluated for every item (the layout of genagents). Prints prompt tokens evaluated, cached tokens
and seconds per item.

Run: python -m benchmarks.bench_answering   (uses ../shared/data, the embedded models, a temporary database)
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from agentbank.agents import BuildConfig, build_agent
from agentbank.answering import AnswerEngine, Condition
from agentbank.answering.schemas import answer_schema, describe_item
from agentbank.crypto import KeyRing
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.door import AgentDoor, Grant
from agentbank.ingest import parse_turns_json
from agentbank.instruments import load_instrument, select_items
from agentbank.keystore import MemoryKeyStore
from agentbank.prompting import prompt
from agentbank.providers.chat import Usage
from agentbank.providers.embedded_llm import EmbeddedChatModel
from agentbank.providers.embeddings import LocalMiniLMEmbedder
from agentbank.settings import Settings
from agentbank.transcripts import store_interview
from benchmarks.common import save
from migrations.runner import alembic_config, upgrade

SAMPLE = Path("../shared/data/transcripts/sample_interview/joon_park_sample_interview.json")
ITEMS = (
    "cappun gunlaw grass abany natenvir natheal natcrime nateduc natrace natfare "
    "trust fair helpful happy polviews courts prayer fepresch letdie1 homosex"
).split()
FLUSH = [{"role": "user", "content": "Say hello."}]


def main() -> None:
    console = Console()
    settings = Settings()
    root = Path(tempfile.mkdtemp(prefix="agentbank-bench-"))
    server = start_embedded_server(root / "postgres")
    upgrade(alembic_config(server.url))
    chat, embedder = EmbeddedChatModel(threads=settings.embedded_threads), LocalMiniLMEmbedder()
    keys = KeyRing("benchmark-secret-" * 3, MemoryKeyStore())
    gss = load_instrument("gss", settings.reference_data_dir)
    items = select_items(gss, ITEMS)
    figures: dict[str, dict[str, float]] = {}
    try:
        with Session(create_engine(server.url)) as session:
            participant = store_interview(session, parse_turns_json(SAMPLE), keys)
            began = time.perf_counter()
            config = BuildConfig.of(chat, embedder, settings.reflection_word_budget)
            agent = build_agent(session, participant, chat=chat, embedder=embedder, keys=keys, config=config)
            figures["build"] = {"seconds": time.perf_counter() - began, **agent.build["usage"]}
            door = AgentDoor(chat=chat, embedder=embedder, keys=keys, memory_token_budget=settings.memory_token_budget)
            grant = Grant.operator("measuring the answering speed", "benchmark")
            for label, per_call in [("a_one_item_per_call", 1), ("b_five_items_per_call", 5)]:
                chat.complete(FLUSH, max_tokens=4)
                began = time.perf_counter()
                answers = door.survey(session, grant, agent, participant, gss, items, items_per_call=per_call).answers
                total = sum((a.usage for a in answers), Usage())
                figures[label] = _per_item(total, time.perf_counter() - began, len(items))
            chat.complete(FLUSH, max_tokens=4)
            # The naive prompt is built from the engine's own parts, so it is compared like for like.
            engine = AnswerEngine(
                chat=chat, embedder=embedder, keys=keys, memory_token_budget=settings.memory_token_budget
            )
            figures["c_naive_whole_prompt"] = _naive(engine, session, agent, participant, gss, items, chat)
    finally:
        chat.close()
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
    console.print(f"saved to {save('answering', figures)}")


def _per_item(usage: Usage, seconds: float, n: int) -> dict[str, float]:
    return {
        "evaluated": usage.evaluated_prompt_tokens / n,
        "cached": usage.cached_tokens / n,
        "completion": usage.completion_tokens / n,
        "seconds": seconds / n,
    }


def _naive(engine, session, agent, participant, gss, items, chat) -> dict[str, float]:
    """The same context, but the item comes first, so no two prompts share a prefix."""
    total, began = Usage(), time.perf_counter()
    for item in items:
        expert = engine._chooser.choose(item.question, item.meta.get("expert"))
        context = engine._context(
            session,
            agent,
            participant,
            engine._cipher(agent, participant),
            Condition(),
            expert,
            " ".join(i.question for i in items),
            gss,
            set(),
        )
        messages = [
            {"role": "system", "content": f"{describe_item(item)}\n\n{context.system}"},
            {"role": "user", "content": prompt("answer_items")},
        ]
        total += chat.complete(messages, schema=answer_schema(item), max_tokens=120).usage
    return _per_item(total, time.perf_counter() - began, len(items))


if __name__ == "__main__":
    main()
