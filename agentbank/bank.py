"""The bank's working parts for one process: database sessions, models and keys, built from settings."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property

from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from agentbank.crypto import KeyRing
from agentbank.db.engine import database_url, make_engine, make_sessionmaker
from agentbank.db.migrations import current_revision, head_revision, migrate_database
from agentbank.door import AgentDoor
from agentbank.errors import ConfigurationError
from agentbank.keystore import FileKeyStore
from agentbank.providers.chat import ChatModel
from agentbank.providers.embeddings import Embedder
from agentbank.providers.factory import build_chat_model, build_embedder
from agentbank.settings import Settings


@dataclass
class Bank:
    """What commands, workers and the API share; built once per process and closed at its end."""

    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    keys: KeyRing
    chat: ChatModel | None = None
    embedder: Embedder | None = None

    def require_models(self) -> tuple[ChatModel, Embedder]:
        """The chat model and embedder (this bank was opened with them)."""
        assert self.chat is not None and self.embedder is not None, "open the bank with models=True"
        return self.chat, self.embedder

    @cached_property
    def door(self) -> AgentDoor:
        """The one way to an agent's answers, with this process's models."""
        chat, embedder = self.require_models()
        return AgentDoor(
            chat=chat, embedder=embedder, keys=self.keys, memory_token_budget=self.settings.memory_token_budget
        )


def _require_current_schema(engine: Engine, settings: Settings) -> None:
    with engine.connect() as conn:
        revision = current_revision(conn)
    head = head_revision()
    if revision != head:
        raise ConfigurationError(
            f"the database schema is at {revision or 'nothing'}, this version of the bank needs {head}",
            hint="run `agentbank db upgrade`",
        )


def open_keyring(settings: Settings, database: str | None = None) -> KeyRing:
    """The keyring of one database (unset: the bank's): its key-encryption keys in a file outside it."""
    if database is None:
        database = make_url(database_url(settings)).database or "postgres"
    secret = settings.secret_key.get_secret_value()
    return KeyRing(secret, FileKeyStore(settings.keyring_path(database), secret))


@contextmanager
def open_bank(settings: Settings, *, models: bool = True) -> Iterator[Bank]:
    """Connect to the database (starting the embedded server if needed) and load the models."""
    if settings.database_url is None:
        # The embedded database is the bank's own: bring it to the schema this version needs (as its
        # owner), so a first command on a fresh data directory just works, and give the application
        # role its login. A configured server is migrated on purpose.
        migrate_database(settings)
    engine = make_engine(settings)
    _require_current_schema(engine, settings)
    keys = open_keyring(settings, engine.url.database)
    bank = Bank(settings, engine, make_sessionmaker(engine), keys)
    try:
        if models:
            bank.embedder = build_embedder(settings)
            bank.chat = build_chat_model(settings)
        yield bank
    finally:
        for provider in (bank.chat, bank.embedder):
            if provider is not None:
                provider.close()
        engine.dispose()
