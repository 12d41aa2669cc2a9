"""Builds at the endpoint's pace: a build's independent calls (the experts' reflections) run at once, within
the process's calls in flight."""

from __future__ import annotations

import threading
import time
from concurrent.futures import CancelledError

import pytest
from sqlalchemy import create_engine, select

from agentbank.building.agents import BuildConfig
from agentbank.building.build import build_now
from agentbank.building.reflection import EXPERTS
from agentbank.building.transcripts import store_interview
from agentbank.db import make_sessionmaker, transaction
from agentbank.db.models import Memory, Participant
from agentbank.providers.chat import ChatRequest
from agentbank.providers.fakes import HashingEmbedder
from agentbank.providers.in_flight import InFlight
from tests.support.builds import Counting
from tests.support.factories import interview, keyring


def test_calls_in_flight_keep_their_order_their_limit_and_stop_at_the_first_error():
    in_flight = InFlight(3)
    chat = Counting()
    heard: list[int] = []
    calls = [lambda n=n: (chat.complete(_request()), n)[1] for n in range(12)]
    assert in_flight.run_all(calls, lambda index, _result: heard.append(index)) == list(range(12))
    assert chat.most == 3 and sorted(heard) == list(range(12))

    made: list[int] = []

    def failing(n: int) -> int:
        time.sleep(0.05)
        made.append(n)
        if n == 0:
            raise ValueError("the endpoint refused")
        return n

    with pytest.raises(ValueError, match="refused"):
        InFlight(2).run_all([lambda n=n: failing(n) for n in range(20)])
    assert len(made) < 20  # the calls not yet started were not made

    stopping = InFlight(2)
    threading.Timer(0.1, stopping.close).start()
    with pytest.raises(CancelledError):
        stopping.run_all([lambda: time.sleep(0.05) for _ in range(40)])


def _request() -> ChatRequest:
    return ChatRequest([{"role": "user", "content": "hello"}], None)


def test_one_build_asks_its_four_experts_at_once_and_files_each_note_under_its_expert(fresh_database):
    engine = create_engine(fresh_database)
    sessions = make_sessionmaker(engine)
    keys, chat, embedder = keyring(), Counting(), HashingEmbedder()
    with transaction(sessions) as session:
        ann = store_interview(session, interview("file:ann.json", 6), keys).id
    try:
        agent = build_now(sessions, ann, chat=chat, embedder=embedder, keys=keys,
                          config=BuildConfig.of(chat, embedder, 0), in_flight=InFlight(8))  # fmt: skip
        assert agent is not None and chat.most == len(EXPERTS)  # one window: four reflections at once
        with sessions() as session:
            reflections = select(Memory.expert, Memory.text_encrypted).where(
                Memory.agent_id == agent.id, Memory.kind == "reflection"
            )
            notes = session.execute(reflections).all()
            cipher = keys.cipher(ann, session.get_one(Participant, ann).wrapped_key)
        assert {expert for expert, _ in notes} == {e.key for e in EXPERTS}
        assert all(cipher.open(text).startswith(f"Seen by {expert},") for expert, text in notes)
    finally:
        engine.dispose()
