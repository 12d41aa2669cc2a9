"""`agentbank build` builds several agents at once, and all their calls together stay within the process's
calls in flight; nobody is built twice."""

from __future__ import annotations

from sqlalchemy import create_engine, func, select

from agentbank.building.transcripts import store_interview
from agentbank.core.settings import Settings
from agentbank.db import make_sessionmaker, transaction
from agentbank.db.models import Agent
from agentbank.providers.fakes import HashingEmbedder
from agentbank.runtime.bank import Bank
from app.cli.agents import _build_pending
from tests.support.builds import Counting
from tests.support.factories import interview, keyring


def test_several_agents_are_built_at_once_within_the_calls_in_flight(fresh_database, tmp_path):
    engine = create_engine(fresh_database)
    sessions = make_sessionmaker(engine)
    keys, chat, embedder = keyring(), Counting(), HashingEmbedder()
    with transaction(sessions) as session:
        people = [store_interview(session, interview(f"file:{n}.json", 6), keys).id for n in range(6)]
    settings = Settings(chat_provider="fake", chat_calls_in_flight=6, data_dir=tmp_path)
    bank = Bank(settings, engine, sessions, keys, chat, embedder)
    try:
        assert _build_pending(bank) == (len(people), 0)
        # Six builders of four reflections each could ask 24 at once: the process keeps to its six.
        assert chat.most == 6
        with sessions() as session:
            assert session.scalar(select(func.count()).select_from(Agent)) == len(people)
            assert session.scalar(select(func.max(Agent.version))) == 1
    finally:
        bank.in_flight.close()
        engine.dispose()
