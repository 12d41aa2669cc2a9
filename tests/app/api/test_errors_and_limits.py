"""One error shape with honest statuses, and limits on bodies, URLs and request rates."""

import threading
import time

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from agentbank.core.errors import RateLimitedError
from app.api import create_app
from app.api.limits import MemoryRateLimiter


def test_unknown_route_and_method(api):
    r = api.client.get("/v1/nothing-here")
    assert r.status_code == 404 and r.json() == {"error": {"code": "not_found", "message": "Not Found"}}
    assert api.client.delete("/v1/health").json()["error"]["code"] == "method_not_allowed"


def test_validation_errors_name_fields_without_echoing_values(api):
    headers = api.token("applicant", "projects:apply")
    secret_looking = "SECRET-VALUE-123"
    r = api.client.post(
        "/v1/projects", json={"title": secret_looking * 20, "query_types": ["telepathy"]}, headers=headers
    )
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["code"] == "invalid_request" and "title" in error["message"]
    assert secret_looking not in r.text


def test_body_and_query_limits(api):
    headers = api.token("applicant", "projects:apply")
    big = {"title": "x", "purpose": "y" * 70_000}
    r = api.client.post("/v1/projects", json=big, headers=headers)
    assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large"
    r = api.client.get("/v1/health", params={"q": "a" * 3000})
    assert r.status_code == 414


@pytest.fixture
def strict(engine, settings, api):
    app = create_app(settings.model_copy(update={"rate_limit_per_minute": 3}), api.bank)
    with TestClient(app, base_url="http://localhost") as client:
        yield client


def test_rate_limit_answers_429_with_retry_after(strict):
    statuses = [strict.get("/v1/health").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    r = strict.get("/v1/health")
    assert r.json()["error"]["code"] == "rate_limited" and int(r.headers["retry-after"]) >= 1


def test_the_in_memory_limit_is_a_moving_window_of_a_minute():
    now = [1000.0]
    limiter = MemoryRateLimiter(3, clock=lambda: now[0])
    for at in (0, 20, 40):
        now[0] = 1000.0 + at
        limiter.check("client:a")
    limiter.check("client:b")  # each caller has a limit of its own
    with pytest.raises(RateLimitedError) as refused:
        limiter.check("client:a")
    assert refused.value.retry_after == 20  # the first of the three leaves the window at 1060
    now[0] = 1060.5
    limiter.check("client:a")  # one left the window: one more fits, and the refused one was not counted
    with pytest.raises(RateLimitedError):
        limiter.check("client:a")


def test_the_in_memory_limit_starts_no_thread_per_request(settings):
    """The library's memory storage started a timer thread on most requests (each time the last had run
    out): a cost on every read of a client that reads every few milliseconds."""
    limiter = create_app(settings).state.limiter
    time.sleep(0.05)  # any timer started when the limiter was made has run out
    before = set(threading.enumerate())
    for _ in range(3):
        limiter.check("client:a")
    assert set(threading.enumerate()) <= before


def test_api_processes_share_one_limit_kept_in_the_database(fresh_database, settings):
    from sqlalchemy import create_engine

    from agentbank.db import make_sessionmaker
    from agentbank.runtime.bank import Bank
    from tests.support.factories import keyring

    engine = create_engine(fresh_database)
    bank = Bank(settings, engine, make_sessionmaker(engine), keyring())

    def statuses(storage: str) -> list[int]:
        limited = settings.model_copy(update={"rate_limit_per_minute": 3, "rate_limit_storage": SecretStr(storage)})
        with TestClient(create_app(limited, bank)) as first, TestClient(create_app(limited, bank)) as second:
            # Two API processes behind a balancer: the caller's requests land on each in turn.
            return [(first, second)[n % 2].get("/v1/health").status_code for n in range(6)]

    try:
        assert statuses("memory://") == [200] * 6  # each process counts only its own share
        assert statuses("database") == [200, 200, 200, 429, 429, 429]  # one limit for both
    finally:
        engine.dispose()
