"""The bank's working parts for one process: database sessions, models and keys, built from settings.

What only some processes use is imported when first used: the door and the model providers (the OpenAI
client among them) take most of a second to import, and a command that reads the database, or a worker
before its first model task, needs none of them. Loading the models, too, can wait (``load_models``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from agentbank.core.settings import Settings
from agentbank.db.connections import database_url, make_engine, make_sessionmaker
from agentbank.db.schema import Schema, require_current
from agentbank.keys.crypto import KeyRing
from agentbank.keys.stores import open_store

if TYPE_CHECKING:
    from agentbank.consultation.door import AgentDoor
    from agentbank.providers.chat import ChatModel
    from agentbank.providers.embeddings import Embedder
    from agentbank.providers.in_flight import InFlight

log = logging.getLogger(__name__)


@dataclass
class Bank:
    """What commands, workers and the API share; built once per process and closed at its end."""

    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    keys: KeyRing
    chat: ChatModel | None = None
    embedder: Embedder | None = None
    planning_embedder: Embedder | None = None  # built by ``planner`` where the process has no embedder
    _loading: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def require_models(self) -> tuple[ChatModel, Embedder]:
        """The chat model and embedder (this bank was opened with them, or has loaded them since)."""
        assert self.chat is not None and self.embedder is not None, "open the bank with models=True"
        return self.chat, self.embedder

    def load_models(self) -> tuple[ChatModel, Embedder]:
        """The chat model and embedder, built now where the bank has none yet (a worker loads them for its
        first task that needs them); they close with the bank. Threads that ask at once wait for one load."""
        from agentbank.providers.call_limits import shared_call_limit
        from agentbank.providers.factory import build_chat_model, build_embedder

        with self._loading:
            if self.embedder is None:
                self.embedder = build_embedder(self.settings)
            if self.chat is None:
                self.chat = build_chat_model(self.settings, gate=shared_call_limit(self.settings, self.engine))
        return self.require_models()

    @cached_property
    def door(self) -> AgentDoor:
        """The one way to an agent's answers, with this process's models."""
        from agentbank.consultation.door import AgentDoor

        chat, embedder = self.require_models()
        return AgentDoor(
            chat=chat, embedder=embedder, keys=self.keys, memory_token_budget=self.settings.memory_token_budget,
            calls_in_flight=self.in_flight,
        )  # fmt: skip

    @cached_property
    def planning_chat(self) -> ChatModel:
        """This process's chat model, or, where it has none (the API), the configured one's name and token
        count without the model (``providers.factory.planning_model``)."""
        from agentbank.providers.factory import planning_model

        return self.chat if self.chat is not None else planning_model(self.settings)

    @cached_property
    def planner(self) -> AgentDoor:
        """A door for estimates: it plans calls with the bank's own prompts and asks no chat model. Where the
        process has no embedder (the API), one is built on first use: choosing an item's expert notes and
        the interview's passages needs it."""
        from agentbank.consultation.door import AgentDoor
        from agentbank.providers.factory import build_embedder

        embedder = self.embedder
        if embedder is None:
            embedder = self.planning_embedder = build_embedder(self.settings)
        return AgentDoor(
            chat=self.planning_chat, embedder=embedder, keys=self.keys,
            memory_token_budget=self.settings.memory_token_budget,
        )  # fmt: skip

    @cached_property
    def in_flight(self) -> InFlight:
        """This process's model calls in flight, shared by its jobs' answers and its builds."""
        from agentbank.providers.in_flight import InFlight

        return InFlight(self.settings.calls_in_flight)


def open_keyring(settings: Settings, database: str | None = None) -> KeyRing:
    """The keyring of one database (unset: the bank's): its key-encryption keys outside it, in the key store
    the settings choose (a file, or a PKCS#11 token)."""
    if database is None:
        database = make_url(database_url(settings)).database or "postgres"
    return KeyRing(settings.secret_key.get_secret_value(), open_store(settings, database))


POOL_SIZE = 5  # connections kept open; more are opened up to ``connections_needed`` when needed


def connections_needed(settings: Settings) -> int:
    """The most database connections one process opens at once.

    A worker's tasks and its calls in flight each need a connection now and then (briefly); a build holds
    its claim's connection besides, so builds at once need two each. The API admits no more requests at
    once than its pool holds (``app.api.admission``), less the few its own background threads use.
    """
    return POOL_SIZE + max(10, 2 * settings.calls_in_flight + 5)


@contextmanager
def open_bank(settings: Settings, *, schema: Schema, models: bool = True) -> Iterator[Bank]:
    """Connect to the database (starting the embedded server if needed) and load the models.

    The embedded database is the bank's own: it is brought to ``schema``'s newest revision (as its
    owner), so that a first command on a fresh data directory just works, and the application role
    gets its login. A configured server is migrated on purpose, and must be at the newest revision.
    """
    if settings.database_url is None:
        schema.migrate(settings)
    engine = make_engine(settings, pool_size=POOL_SIZE, max_overflow=connections_needed(settings) - POOL_SIZE)
    require_current(engine, schema)
    keys = open_keyring(settings, engine.url.database)
    bank = Bank(settings, engine, make_sessionmaker(engine), keys)
    try:
        if models:
            bank.load_models()
        yield bank
    finally:
        _chain_what_was_written(bank)
        if "in_flight" in bank.__dict__:  # made (cached_property): the door's and the builds' calls
            bank.in_flight.close()
        for provider in (bank.chat, bank.embedder, bank.planning_embedder):
            if provider is not None:
                provider.close()
        engine.dispose()


def _chain_what_was_written(bank: Bank) -> None:
    """A last round of the audit sequencer: a command's events are chained before its process ends,
    even where no server or worker runs (they would chain them within seconds of starting)."""
    from agentbank.audit.sequencer import Sequencer

    try:
        Sequencer.of(bank.sessions, bank.settings).run_until_done()
    except SQLAlchemyError:  # the database went away: the next process to start chains them
        log.warning("could not chain this command's audit events; the next server or worker does")
