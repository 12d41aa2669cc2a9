"""Small builders for agent tests: a scripted model that answers any of the bank's schemas."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from agentbank.building.agents import BuildConfig
from agentbank.building.build import build_agent
from agentbank.building.ingest import ParsedInterview, ParsedTurn
from agentbank.building.transcripts import store_interview
from agentbank.core.settings import Settings
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import FileKeyStore, MemoryKeyStore
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel, minimal_answer

SECRET = "test-secret-that-is-long-enough-for-production-use"
_KEKS = MemoryKeyStore()


def keyring(store_path: Path | None = None) -> KeyRing:
    """The tests' keyring: one in memory for the whole run, or the file that a server under test uses too."""
    return KeyRing(SECRET, _KEKS if store_path is None else FileKeyStore(store_path, SECRET))


def process_keyring(database_url: str, data_dir: Path | None = None) -> KeyRing:
    """The keyring a bank process started with this database (and data directory, or the tests') uses."""
    settings = Settings() if data_dir is None else Settings(data_dir=data_dir)
    return keyring(settings.keyring_path(make_url(database_url).database or "postgres"))


CANARY = "Zanzibar-quokka-7731"

_counter = itertools.count()


def responder(messages: list[dict[str, str]], schema: dict[str, Any] | None) -> Any:
    """Valid answers for every schema the bank uses, with distinct observations."""
    if schema is None:
        return "plain text"
    props = schema.get("properties", {})
    if "observations" in props:
        return {"observations": [f"Observation number {next(_counter)} about this person." for _ in range(6)]}
    if "persona" in props:
        return {"persona": "I am a retired machinist who loves my grandchildren and my garden."}
    if "cited_turns" in props:
        return {"answer": "I grew up on a farm.", "cited_turns": props["cited_turns"]["items"]["enum"][:2]}
    return minimal_answer(schema)


def interview(
    ref: str = "file:test.json", turns: int = 12, demographics: dict | None = None, extra: str | None = None
) -> ParsedInterview:
    """An interview whose participant mentions the canary once (and says ``extra`` as a last turn)."""
    parsed = []
    for n in range(turns):
        parsed.append(ParsedTurn("interviewer", f"Question {n}: tell me about your life, part {n}."))
        text = f"In part {n} I talk about the farm, my family and my work at the plant."
        if n == 3:
            text += f" My secret word is {CANARY}."
        parsed.append(ParsedTurn("participant", text))
    if extra:
        parsed += [ParsedTurn("interviewer", "Anything else?"), ParsedTurn("participant", extra)]
    return ParsedInterview(ref, tuple(parsed), demographics or {"sex": 2, "race": 1, "region": 3, "age": 61})


def build(session, *, ref: str = "file:test.json", turns: int = 12, chat=None, embedder=None, keys=None, extra=None):
    """A stored participant with a built agent; returns (participant, agent, chat, embedder, keys)."""
    keys = keys or keyring()
    chat = chat or ScriptedChatModel(responder)
    embedder = embedder or HashingEmbedder()
    participant = store_interview(session, interview(ref, turns, extra=extra), keys)
    agent = build_agent(
        session, participant, chat=chat, embedder=embedder, keys=keys, config=BuildConfig.of(chat, embedder, 0)
    )
    return participant, agent, chat, embedder, keys
