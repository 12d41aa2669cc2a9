"""A limit of requests and tokens per minute that every process of the bank shares, in its database."""

from __future__ import annotations

import time
from collections.abc import Iterator
from itertools import pairwise

import pytest
from sqlalchemy import Engine, create_engine

from agentbank.core.settings import Settings
from agentbank.providers.call_limits import SharedCallLimit, shared_call_limit
from agentbank.providers.chat import ChatRequest
from tests.agentbank.providers.test_openai_compat import MESSAGES, SCHEMA, answering, completion, model

ENDPOINT = "http://127.0.0.1:9/v1 test-model"


@pytest.fixture
def engines(fresh_database: str) -> Iterator[tuple[Engine, Engine]]:
    """Two engines on one database: two processes of one bank, say on two machines."""
    first, second = create_engine(fresh_database), create_engine(fresh_database)
    yield first, second
    first.dispose()
    second.dispose()


def test_requests_are_spaced_evenly_across_processes(engines):
    waits: list[float] = []
    limits = [SharedCallLimit(e, ENDPOINT, requests_per_minute=600, sleep=waits.append) for e in engines]
    earliest, latest = [], []
    for n in range(10):
        asked = time.monotonic()
        waited = limits[n % 2].wait_turn()  # nobody sleeps here: the slots are only reserved
        answered = time.monotonic()
        # The slot was reserved at some moment of the round trip: its start lies between these two.
        earliest.append(asked + waited)
        latest.append(answered + waited)
    # Each call starts a tenth of a second after the one before, whichever process reserved it; the
    # bounds widen by the database's round trip (tens of milliseconds on a busy machine), never by more.
    for (early_a, late_a), (early_b, late_b) in pairwise(zip(earliest, latest, strict=True)):
        assert early_b - late_a - 0.02 < 0.1 < late_b - early_a + 0.02, (early_b - late_a, late_b - early_a)
    assert waits and len(waits) == 9  # every call but the first waited for its slot


def test_tokens_spent_by_one_process_hold_back_the_others(engines):
    waits: list[float] = []
    spender = SharedCallLimit(engines[0], ENDPOINT, tokens_per_minute=600)
    other = SharedCallLimit(engines[1], ENDPOINT, tokens_per_minute=600, sleep=waits.append)
    assert other.wait_turn() == 0.0  # nothing spent yet
    spender.spent(1200)  # two minutes' worth: the allowance is spent for the coming minute
    waited = other.wait_turn()
    assert 58.0 < waited <= 60.0 and waits == [waited]


def test_a_retry_after_told_to_one_process_holds_every_process(engines, respx_mock):
    told_waits: list[float] = []  # no limit configured: Retry-After still travels
    told = SharedCallLimit(engines[0], ENDPOINT, sleep=told_waits.append)
    other_waits: list[float] = []
    other = SharedCallLimit(engines[1], ENDPOINT, sleep=other_waits.append)
    answering(respx_mock, (429, {}, {"retry-after": "3"}), (200, completion('{"answer": "1"}'), {}))
    sleeps: list[float] = []
    result = model(sleeps, gate=told).complete(ChatRequest(MESSAGES, schema=SCHEMA))
    assert result.data == {"answer": "1"} and sleeps == [3.0]
    assert 2.0 < other.wait_turn() <= 3.0  # the other process waits out the same Retry-After


def test_only_a_remote_endpoint_is_limited(engines, tmp_path):
    assert shared_call_limit(Settings(data_dir=tmp_path), engines[0]) is None  # the embedded model
    remote = Settings(data_dir=tmp_path, chat_provider="openai", chat_model="m", chat_requests_per_minute=60)
    assert isinstance(shared_call_limit(remote, engines[0]), SharedCallLimit)
