"""A moderated focus group of the demo's agents: what the moderator and the agents take in calls, tokens and
time, round by round, beside the dry run's estimate of the same group.

The demo's first N fictional people are built into agents (``--build-with embedded`` builds them with the
embedded chat model, as ``make run`` does; ``fake`` with the scripted one, when only the group is measured),
seated in one group under a project approved for focus groups, and the group is run to its end by the worker's
own function on the chat model chosen (``--model embedded``, SmolLM2 through llama.cpp; ``fake``, the scripted
model, for a smoke run in seconds). Each call is timed as it is made and counted as the moderator's (its choice
of seat and question) or an agent's (an utterance and its stance, one call).

Run: python -m benchmarks.bench_focus_group [--seats 3] [--turns 6] [--model embedded|fake]
     [--build-with embedded|fake] [--quick]   (a temporary embedded database; ``--quick``: fake models)
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, select

from agentbank.access.clients import create_client
from agentbank.access.principals import Principal
from agentbank.access.scope import ProjectScope
from agentbank.audit import log as audit
from agentbank.building.agents import BuildConfig
from agentbank.building.build import build_agent
from agentbank.building.ingest import parse_turns_json
from agentbank.building.transcripts import store_interview
from agentbank.consultation.door import AgentDoor
from agentbank.core.settings import Settings
from agentbank.db import make_sessionmaker, transaction
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.db.models import FocusGroup, FocusGroupUtterance
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import MemoryKeyStore
from agentbank.providers.chat import ChatRequest, ChatResult
from agentbank.providers.embeddings import LocalMiniLMEmbedder
from agentbank.providers.fakes import ScriptedChatModel, minimal_answer
from agentbank.restricted import projects
from agentbank.restricted.groups.costs import estimate_group
from agentbank.restricted.groups.requests import FocusGroupRequest
from agentbank.restricted.groups.running import run_group
from agentbank.restricted.groups.storage import submit_group
from benchmarks.common import save

DEMO = Path(__file__).resolve().parents[1] / "agentbank" / "runtime" / "demo_interviews"
OPERATOR = audit.Actor("operator", "benchmark")
QUESTIONS = ["What is your first reaction to the plan?", "Who in your town would use it, and who would not?",
             "What would make you change your mind?"]  # fmt: skip
STIMULUS = "The town library opens on Sundays, paid for by closing it on Monday mornings."


class Timed:
    """A chat model whose calls are timed and counted by who makes them (the moderator or an agent)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name = inner, inner.name
        self.calls: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def complete(self, request: ChatRequest) -> ChatResult:
        props = (request.schema or {}).get("properties", {})
        who = "moderator" if "action" in props else "agent" if "stance" in props else "other"
        began = time.perf_counter()
        result = self.inner.complete(request)
        usage = result.usage
        self.calls.append({"who": who, "seconds": time.perf_counter() - began, "prompt": usage.prompt_tokens,
                           "cached": usage.cached_tokens, "completion": usage.completion_tokens})  # fmt: skip
        return result

    def close(self) -> None:
        self.inner.close()


def scripted() -> ScriptedChatModel:
    def respond(messages, schema):
        answer = minimal_answer(schema)
        if schema and "stance" in schema.get("properties", {}):
            answer["answer"] = "I would go on Sundays with my grandchildren, if the hours were posted."
        return answer

    return ScriptedChatModel(respond)


def chat_model(kind: str, settings: Settings) -> Any:
    if kind == "fake":
        return scripted()
    from agentbank.providers.embedded_llm import EmbeddedChatModel

    return EmbeddedChatModel(threads=settings.embedded_threads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seats", type=int, default=3)
    parser.add_argument("--turns", type=int, default=6, help="the guide's budget of agent turns")
    parser.add_argument("--model", choices=["embedded", "fake"], default="embedded")
    parser.add_argument("--build-with", choices=["embedded", "fake"], default="embedded")
    parser.add_argument("--quick", action="store_true", help="fake models throughout: a smoke run in seconds")
    args = parser.parse_args()
    if args.quick:
        args.model, args.build_with = "fake", "fake"
    settings = Settings()
    root = Path(tempfile.mkdtemp(prefix="agentbank-bench-"))
    server = start_embedded_server(root / "postgres")
    from migrations.runner import alembic_config, upgrade

    upgrade(alembic_config(server.url))
    engine = create_engine(server.url)
    sessions = make_sessionmaker(engine)
    keys = KeyRing("benchmark-secret-" * 3, MemoryKeyStore())
    embedder = LocalMiniLMEmbedder() if args.model == "embedded" else None
    builder = chat_model(args.build_with, settings)
    group_chat = Timed(builder if args.model == args.build_with else chat_model(args.model, settings))
    if embedder is None:
        from agentbank.providers.fakes import HashingEmbedder

        embedder = HashingEmbedder()
    figures: dict[str, Any] = {"seats": args.seats, "turns": args.turns, "model": group_chat.name,
                               "built_with": builder.name}  # fmt: skip
    try:
        began = time.perf_counter()
        agents = []
        for path in sorted(DEMO.glob("*.json"))[: args.seats]:
            with transaction(sessions) as session:
                participant = store_interview(session, parse_turns_json(path), keys)
                config = BuildConfig.of(builder, embedder, settings.reflection_word_budget)
                agents.append(build_agent(session, participant, chat=builder, embedder=embedder, keys=keys,
                                          config=config).id)  # fmt: skip
        figures["build_seconds"] = round(time.perf_counter() - began, 1)
        door = AgentDoor(chat=group_chat, embedder=embedder, keys=keys,
                         memory_token_budget=settings.memory_token_budget)  # fmt: skip
        request = FocusGroupRequest.model_validate({
            "seats": [str(a) for a in agents], "stimulus": {"kind": "concept", "text": STIMULUS},
            "guide": {"topics": [{"title": "Sunday opening", "questions": QUESTIONS}],
                      "probes": ["Why do you say that?"], "max_turns": args.turns, "probes_per_question": 1},
        })  # fmt: skip
        with transaction(sessions) as session:
            team = create_client(session, "team", ["projects:apply", "individual:query"], OPERATOR)
            pi = Principal("client", team.client.client_id, team.client.id,
                           frozenset({"projects:apply", "individual:query"}))  # fmt: skip
            purpose = "How residents discuss a change to the library's hours."
            project = projects.apply(session, pi, projects.Application("Library", purpose, purpose, [], agents,
                                                                       ["focus_group"]))  # fmt: skip
            scope = ProjectScope.of(agents, ["focus_group"], 12, 1000, datetime.now(UTC) + timedelta(days=30))
            projects.decide(session, Principal("client", "reviewer", None, frozenset({"review"})), project.id,
                            scope, "ok")  # fmt: skip
            project_id = project.id
        with transaction(sessions) as session:
            estimate = estimate_group(session, sessions, pi, project_id, request, door, settings)
        group_chat.calls.clear()
        figures["estimate"] = {k: estimate[k] for k in ("calls", "prompt_tokens", "completion_tokens", "rounds")}
        with transaction(sessions) as session:
            group, _ = submit_group(session, pi, project_id, "benchmark-1", request)
            group_id = group.id
        began = time.perf_counter()
        run_group(sessions, door, embedder, group_id)
        figures["group_seconds"] = round(time.perf_counter() - began, 1)
        with transaction(sessions) as session:
            figures["status"] = session.get_one(FocusGroup, group_id).status
            kinds = session.scalars(select(FocusGroupUtterance.kind).where(FocusGroupUtterance.group_id == group_id))
            figures["turns_by_kind"] = dict(sorted(_count(kinds).items()))
        figures["calls"] = _summary(group_chat.calls)
    finally:
        group_chat.close()
        if builder is not group_chat.inner:
            builder.close()
        engine.dispose()
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)
    name = "focus-group-quick" if args.quick else f"focus-group-{args.model}"
    print(save(name, figures))
    for who, row in figures["calls"].items():
        print(
            f"{who}: {row['calls']} calls, {row['prompt_tokens']} prompt tokens ({row['cached_tokens']} cached), "
            f"{row['completion_tokens']} completion, {row['seconds']} s (p50 {row['p50_s']} s per call)"
        )
    print(f"focus group: {figures['status']} in {figures['group_seconds']} s on {figures['model']}")


def _count(values) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for value in values:
        counts[value] += 1
    return counts


def _summary(calls: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for call in calls:
        by[call["who"]].append(call)
    out = {}
    for who, made in by.items():
        seconds = sorted(c["seconds"] for c in made)
        out[who] = {"calls": len(made), "prompt_tokens": sum(c["prompt"] for c in made),
                    "cached_tokens": sum(c["cached"] for c in made),
                    "completion_tokens": sum(c["completion"] for c in made),
                    "seconds": round(sum(seconds), 1), "p50_s": round(seconds[len(seconds) // 2], 2)}  # fmt: skip
    return out


if __name__ == "__main__":
    main()
