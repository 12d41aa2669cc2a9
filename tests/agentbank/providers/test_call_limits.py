"""A limit of requests and tokens per minute that every process of the bank shares, in its database."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise

import pytest
from sqlalchemy import Engine, create_engine, event, text

from agentbank.core.settings import Settings
from agentbank.providers import call_limits
from agentbank.providers.call_limits import BATCH_S, SharedCallLimit, shared_call_limit
from agentbank.providers.chat import ChatRequest
from tests.support.endpoints import MESSAGES, SCHEMA, answering, completion, model

ENDPOINT = "http://127.0.0.1:9/v1 test-model"


@pytest.fixture
def engines(fresh_database: str) -> Iterator[tuple[Engine, Engine]]:
    """Two engines on one database: two processes of one bank, say on two machines."""
    first, second = create_engine(fresh_database), create_engine(fresh_database)
    yield first, second
    first.dispose()
    second.dispose()


@contextmanager
def statements(*engines: Engine) -> Iterator[list[str]]:
    """The statements on the limits' table that ``engines`` send meanwhile."""
    sent: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        if "call_limits" in statement:
            sent.append(statement)

    for engine in engines:
        event.listen(engine, "before_cursor_execute", count)
    try:
        yield sent
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", count)


def starts(limit: SharedCallLimit, calls: int) -> list[float]:
    """When each of ``calls`` turns would start (nobody sleeps: the slots are only reserved)."""
    return [limit.wait_turn() + time.monotonic() for _ in range(calls)]


def test_requests_are_spaced_evenly_across_processes(engines):
    waits: list[float] = []
    limits = [SharedCallLimit(e, ENDPOINT, requests_per_minute=600, sleep=waits.append) for e in engines]
    with statements(*engines) as sent:
        begun = [start for n in range(20) for start in starts(limits[n % 2], 1)]
    # Whichever process reserved it, no call starts within a tenth of a second of another; the starts
    # shift by the database's round trip (tens of milliseconds on a busy machine), never by more.
    ordered = sorted(begun)
    assert min(b - a for a, b in pairwise(ordered)) > 0.1 - 0.02, ordered
    assert len(waits) == 19  # every call but the first waited for its slot
    assert len(sent) < 20  # each process reserved several slots at a time


def test_a_busy_process_reserves_its_slots_in_batches(engines):
    limit = SharedCallLimit(engines[0], ENDPOINT, requests_per_minute=600, sleep=lambda _: None)
    with statements(engines[0]) as sent:
        begun = starts(limit, 35)
    # One, two, four, eight slots, then ten (a second's allowance) at a time, as the calls come faster.
    assert len(sent) == 6
    assert all(abs(b - a - 0.1) < 0.02 for a, b in pairwise(begun)), begun  # the slots follow one another
    # The other process's calls come after every slot this one reserved.
    other = SharedCallLimit(engines[1], ENDPOINT, requests_per_minute=600, sleep=lambda _: None)
    assert starts(other, 1)[0] > max(begun) + 0.1 - 0.02


def test_a_slot_whose_time_passed_is_left_unused():
    clock = [100.0]
    limit = SharedCallLimit(None, ENDPOINT, requests_per_minute=600, clock=lambda: clock[0])  # type: ignore[arg-type]
    limit._slots.extend([100.0, 100.1, 100.2])  # as a reservation leaves them
    clock[0] = 100.17  # 100.1 passed more than LATE_S ago
    assert limit._slot(clock[0]) == 100.2  # 100.0 and 100.1 passed: taken now, a call would start early
    assert limit._slot(clock[0]) is None  # none left: the next call reserves


def test_with_no_limit_of_requests_holds_are_read_once_a_second(engines):
    clock = [time.monotonic()]
    limit = SharedCallLimit(engines[0], ENDPOINT, sleep=lambda _: None, clock=lambda: clock[0])
    other = SharedCallLimit(engines[1], ENDPOINT, sleep=lambda _: None)
    with statements(engines[0]) as sent:
        assert [limit.wait_turn() for _ in range(100)] == [0.0] * 100
        assert len(sent) == 1
        other.hold(5.0)  # another process is told to wait
        clock[0] += BATCH_S  # this one reads the hold at its first call a second later
        assert 4.0 < limit.wait_turn() <= 5.0 and len(sent) == 2


def test_while_one_thread_reads_the_holds_the_others_go_on_with_the_last_reading(engines):
    limit = SharedCallLimit(engines[0], ENDPOINT, sleep=lambda _: None)
    limit._reading = True  # another thread's reading is in flight
    with statements(engines[0]) as sent:
        assert limit.wait_turn() == 0.0 and sent == []


def test_the_process_told_to_wait_reserves_after_the_hold(engines):
    limit = SharedCallLimit(engines[0], ENDPOINT, requests_per_minute=600, sleep=lambda _: None)
    starts(limit, 5)  # slots reserved ahead
    limit.hold(3.0)
    assert 2.0 < limit.wait_turn() <= 3.0


def test_tokens_are_written_in_batches_and_within_a_second(engines, monkeypatch):
    limit = SharedCallLimit(engines[0], ENDPOINT, tokens_per_minute=6000)  # a second's allowance: 100 tokens
    with statements(engines[0]) as sent:
        for _ in range(5):
            limit.spent(10)
        assert sent == []  # counted here, not yet written
        limit.spent(60)  # past a second's allowance: written at once
        assert len(sent) == 1
    assert 1.0 < spent_ahead(engines[1]) <= 1.1  # 110 tokens: 1.1 s of the allowance
    monkeypatch.setattr(call_limits, "BATCH_S", 0.05)
    limit.spent(10)  # no call follows: written all the same, within BATCH_S
    deadline = time.monotonic() + 10
    while spent_ahead(engines[1]) <= 1.1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 1.1 < spent_ahead(engines[1]) <= 1.2


def spent_ahead(engine: Engine) -> float:
    """Seconds of the token allowance spent ahead of now, as the database holds them."""
    with engine.connect() as conn:
        query = "SELECT extract(epoch FROM tat - clock_timestamp()) FROM call_limits WHERE key LIKE '% tokens'"
        return float(conn.execute(text(query)).scalar_one())


def test_tokens_spent_by_one_process_hold_back_the_others(engines):
    waits: list[float] = []
    clock = [time.monotonic()]
    spender = SharedCallLimit(engines[0], ENDPOINT, tokens_per_minute=600)
    other = SharedCallLimit(engines[1], ENDPOINT, tokens_per_minute=600, sleep=waits.append, clock=lambda: clock[0])
    assert other.wait_turn() == 0.0  # nothing spent yet
    spender.spent(1200)  # two minutes' worth: the allowance is spent for the coming minute
    clock[0] += BATCH_S  # the other process reads the tokens again at its first call a second later
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
