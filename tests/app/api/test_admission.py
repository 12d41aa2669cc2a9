"""Many clients at once: the API admits no more requests than its database pool serves, the rest wait their
turn, and none of them ever gets a 500 (before, 64 clients at once exhausted the threads waiting for
connections and every read failed after the pool's 30 s timeout)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from app.api.admission import Admission
from tests.app.api.factories import exact_release, population
from tests.app.api.live import live_api

URL = "/v1/open/instruments/gss/items/cappun/distribution"


def counting_app(hold_s: float) -> tuple[Starlette, dict[str, int]]:
    inside = {"now": 0, "most": 0}

    async def slow(_: Request) -> PlainTextResponse:
        inside["now"] += 1
        inside["most"] = max(inside["most"], inside["now"])
        await asyncio.sleep(hold_s)
        inside["now"] -= 1
        return PlainTextResponse("ok")

    return Starlette(routes=[Route("/", slow)]), inside


async def _many(app: Admission, clients: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        return list(await asyncio.gather(*(client.get("/") for _ in range(clients))))


def test_no_more_requests_are_inside_than_admitted_and_the_rest_wait_their_turn():
    inner, inside = counting_app(0.05)
    responses = asyncio.run(_many(Admission(inner, limit=lambda: 3), 12))
    assert [r.status_code for r in responses] == [200] * 12
    assert inside["most"] == 3


def test_a_request_that_waits_too_long_is_told_to_come_back_not_failed():
    inner, _ = counting_app(0.3)
    responses = asyncio.run(_many(Admission(inner, limit=lambda: 1, wait_s=0.1), 4))
    busy = [r for r in responses if r.status_code == 503]
    assert busy and all(r.status_code in (200, 503) for r in responses)
    assert all(r.headers["retry-after"] == "1" and r.json()["error"]["code"] == "busy" for r in busy)


def test_sixty_four_clients_at_once_all_get_their_table(fresh_database, settings):
    with live_api(fresh_database, settings) as api:
        population(api.session, [({"sex": 1 + n % 2}, 1 + n % 3) for n in range(24)])
        exact_release(api.session)
        api.session.commit()
        headers = api.token("researcher", "aggregate:read")
        barrier = threading.Barrier(64)

        def read(_: int) -> int:
            barrier.wait()
            return api.client.get(URL, params={"breakdowns": "sex"}, headers=headers).status_code

        with ThreadPoolExecutor(64) as clients:
            codes = list(clients.map(read, range(64)))
    assert codes == [200] * 64
