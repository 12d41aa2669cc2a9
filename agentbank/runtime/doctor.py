"""``agentbank doctor``: each component checked as it really is on this machine."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from sqlalchemy import Connection, create_engine, pool, text
from sqlalchemy.exc import SQLAlchemyError

from agentbank.building.reflection import REFLECTION_MAX_TOKENS
from agentbank.consultation.answering import MAX_TOKENS_PER_ITEM
from agentbank.core.errors import AgentBankError
from agentbank.core.settings import Settings
from agentbank.db.connections import normalize_url
from agentbank.db.embedded import start_embedded_server
from agentbank.db.schema import Schema
from agentbank.providers.chat import ChatModel, ChatRequest, Message, Speed
from agentbank.providers.factory import DEFAULT_REMOTE_TIMEOUT_S, build_chat_model, build_embedder
from agentbank.providers.pacing import MAX_DERIVED_TIMEOUT_S

Status = Literal["ok", "warn", "fail"]

MIN_POSTGRES = 15
# Words of one reflection window at most (see ``reflection.select_windows``), and tokens per English word.
REFLECTION_WINDOW_WORDS = 3000
TOKENS_PER_WORD = 1.4
MIN_PGVECTOR = (0, 8)

PROBE_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["answer"],
    "additionalProperties": False,
}
PROBE_MESSAGES: list[Message] = [
    {"role": "system", "content": "You answer survey questions with one of the allowed options."},
    {"role": "user", "content": "Is the sky usually blue on a clear day? Answer yes or no."},
]


@dataclass
class Check:
    """The outcome for one component: facts measured, and what to do when it is not ok."""

    component: str
    status: Status = "ok"
    facts: dict[str, str] = field(default_factory=dict)
    hint: str | None = None


def check_database(settings: Settings, schema: Schema | None = None) -> Check:
    """Server and pgvector versions, ``schema``'s revision (when given), and a vector found again by k-NN."""
    check = Check("database")
    if settings.database_url is None:
        server = start_embedded_server(settings.postgres_dir)
        url = server.url
        check.facts["server"] = f"embedded, data in {server.pgdata}"
        kind = "cold" if server.cold_start else "already running"
        check.facts["start"] = f"{server.start_seconds:.2f} s ({kind})"
    else:
        url = normalize_url(settings.database_url.get_secret_value())
        check.facts["server"] = "external (AGENTBANK_DATABASE_URL)"
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            version = conn.execute(text("SHOW server_version")).scalar_one()
            major = int(conn.execute(text("SHOW server_version_num")).scalar_one()) // 10000
            check.facts["postgresql"] = version
            if major < MIN_POSTGRES:
                check.status, check.hint = "fail", f"the bank needs PostgreSQL >= {MIN_POSTGRES}"
                return check
            available = conn.execute(
                text("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
            ).scalar_one_or_none()
            if available is None:
                check.status, check.hint = "fail", "install pgvector >= 0.8 on the database server"
                return check
            _knn_probe(conn, check, available)
            if schema is not None:
                revision, head = schema.current_revision(conn), schema.head_revision()
                check.facts["schema"] = f"at {revision or 'nothing'} (newest {head})"
                if revision != head and check.status == "ok":
                    check.status, check.hint = "warn", "run `agentbank db upgrade`"
    except SQLAlchemyError as exc:
        check.status = "fail"
        cause = getattr(exc, "orig", None) or exc  # a DBAPI error wraps the driver's own
        check.hint = f"cannot use the database ({type(cause).__name__}); check AGENTBANK_DATABASE_URL"
    finally:
        engine.dispose()
    return check


def _knn_probe(conn: Connection, check: Check, available: str) -> None:
    """Insert vectors and find the nearest one again; the caller never commits, so nothing stays."""
    conn.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
    installed = conn.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar_one()
    conn.execute(text("CREATE TEMP TABLE doctor_probe (id int, v vector(3))"))
    conn.execute(text("INSERT INTO doctor_probe VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0,0,1]')"))
    nearest = conn.execute(text("SELECT id FROM doctor_probe ORDER BY v <=> '[0.1,0.9,0.05]' LIMIT 1")).scalar_one()
    check.facts["pgvector"] = f"{installed} (available {available})"
    if tuple(int(p) for p in installed.split(".")[:2]) < MIN_PGVECTOR:
        check.status, check.hint = "fail", "the bank needs pgvector >= 0.8"
    elif nearest != 2:
        check.status, check.hint = "fail", "pgvector returned the wrong nearest neighbour"
    else:
        check.facts["k-NN"] = "inserted 3 vectors, found the nearest"


def check_chat_model(settings: Settings, build: Callable[[Settings], ChatModel] = build_chat_model) -> Check:
    """Load time, one schema-valid JSON answer, speed, and prefix-cache reuse on a repeat; fails when the
    measured speed cannot finish a build's reflection or a survey answer within the call's time limit."""
    check = Check("chat model")
    began = time.perf_counter()
    model = build(settings)
    try:
        check.facts["model"] = f"{model.name} ({settings.chat_provider})"
        check.facts["load"] = f"{time.perf_counter() - began:.2f} s"
        probe = ChatRequest(PROBE_MESSAGES, PROBE_SCHEMA, max_tokens=32)
        first, second = model.complete(probe), model.complete(probe)
    finally:
        model.close()
    check.facts["JSON answer"] = first.text.replace("\n", " ").replace(" ", "") + " (valid against the schema)"
    tokens = first.usage.prompt_tokens + first.usage.completion_tokens
    if first.seconds > 0:
        check.facts["speed"] = (
            f"{tokens / first.seconds:.0f} tokens/s ({first.usage.prompt_tokens} prompt + "
            f"{first.usage.completion_tokens} completion in {first.seconds:.2f} s)"
        )
    check.facts["prefix cache"] = (
        f"repeat reused {second.usage.cached_tokens} of {second.usage.prompt_tokens} prompt tokens"
    )
    if settings.chat_provider == "embedded" and second.usage.cached_tokens == 0:
        check.status, check.hint = "warn", "the embedded model's prefix cache is off"
    if first.speed is not None:
        _check_budgets(check, settings, first.speed)
    return check


def call_limit_s(settings: Settings) -> float:
    """The longest one chat call may take under these settings."""
    if settings.chat_timeout_s is not None:
        return settings.chat_timeout_s
    return MAX_DERIVED_TIMEOUT_S if settings.chat_provider == "embedded" else DEFAULT_REMOTE_TIMEOUT_S


def _check_budgets(check: Check, settings: Settings, speed: Speed) -> None:
    """Fail when the slowest call of a build, or a survey answer, would not end within its time limit.

    The measured speed is the server's own (llama.cpp reports it); endpoints that report none are not
    judged, since their round trip would be mistaken for slowness.
    """
    limit = call_limit_s(settings)
    words = min(settings.reflection_word_budget or REFLECTION_WINDOW_WORDS, REFLECTION_WINDOW_WORDS)
    calls = {
        "a build's reflection": (int(words * TOKENS_PER_WORD) + 300, REFLECTION_MAX_TOKENS),
        "a survey answer": (settings.memory_token_budget + 400, MAX_TOKENS_PER_ITEM),
    }
    check.facts["measured"] = f"{speed.prompt_tps:.0f} prompt, {speed.completion_tps:.1f} completion tokens/s"
    too_slow = []
    for what, (prompt_tokens, completion_tokens) in calls.items():
        needed = speed.seconds_for(prompt_tokens, completion_tokens)
        check.facts[what] = f"up to {needed:.0f} s of {limit:.0f} s allowed"
        if needed > limit:
            too_slow.append(what)
    if too_slow:
        check.status = "fail"
        check.hint = (
            f"too slow on this machine for {' and '.join(too_slow)}: use a remote endpoint "
            "(AGENTBANK_CHAT_PROVIDER=openai), a lighter budget (AGENTBANK_REFLECTION_WORD_BUDGET, "
            "AGENTBANK_MEMORY_TOKEN_BUDGET), or a longer AGENTBANK_CHAT_TIMEOUT_S on an idle machine"
        )


def check_embedder(settings: Settings) -> Check:
    """Dimension, unit length, speed, and related texts closer than unrelated ones."""
    check = Check("embedder")
    began = time.perf_counter()
    embedder = build_embedder(settings)
    try:
        check.facts["model"] = f"{embedder.name} ({settings.embedder_provider})"
        check.facts["load"] = f"{time.perf_counter() - began:.2f} s"
        texts = [
            "My grandmother raised me on a farm in Iowa and taught me to bake bread.",
            "I grew up in the countryside, where my grandma showed me how to make bread.",
            "The quarterly interest rate on corporate bonds rose by half a point.",
        ] * 11
        began = time.perf_counter()
        vectors = embedder.embed(texts)
        seconds = time.perf_counter() - began
    finally:
        embedder.close()
    check.facts["dimension"] = str(vectors.shape[1])
    check.facts["speed"] = f"{len(texts) / seconds:.0f} texts/s"
    related, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    check.facts["similarity"] = f"related {related:.2f} vs unrelated {unrelated:.2f}"
    if vectors.shape[1] != settings.embedding_dimension or not np.allclose(
        np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3
    ):
        check.status, check.hint = "fail", "vectors have the wrong dimension or are not unit length"
    elif related <= unrelated:
        check.status, check.hint = "fail", "related texts are not closer than unrelated ones"
    return check


def run_check(probe: Callable[[Settings], Check], settings: Settings, component: str) -> Check:
    """Run one check, turning the bank's own errors into a failed check with its hint."""
    try:
        return probe(settings)
    except AgentBankError as exc:
        return Check(component, "fail", {"error": exc.message}, exc.hint)
