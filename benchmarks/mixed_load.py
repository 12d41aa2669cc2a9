"""The mixed load of the topology benchmark, through one HTTP endpoint: open-tier reads, job submissions and
their results, portal reads. Each request is timed; a failed one counts as cut by the kill when it started
before the killed processes were gone (the kill is sent, then their sockets close), and as an error otherwise.

A job submission carries its own Idempotency-Key; one cut off is sent again with the same key until it is
acknowledged (202, or 200 once the job it did create has ended; 409 while that job still runs), as a client
that never lost a job would. Acknowledged jobs are followed to their end and their results kept.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

KINDS = ("open", "submit", "results", "portal")
FINAL = {"done", "partial", "failed"}
BREAKDOWNS = ("", "sex", "region", "age_band")
PAUSE_S = 0.05  # between one user's requests: a busy load, not a flood that only measures the queue


@dataclass
class LoadPlan:
    """What the load reads and writes: the seeded bank's tokens, project, agents and portal codes."""

    reader: dict[str, str]
    member: dict[str, str]
    project: str
    agents: list[str]
    codes: list[str]
    items: list[str]
    users: dict[str, int] = field(default_factory=lambda: {"open": 3, "submit": 2, "portal": 2})


@dataclass
class Tally:
    requests: int = 0
    ok: int = 0
    cut: int = 0  # failed in flight when a process was killed
    retried: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        ms = sorted(1000 * s for s in self.seconds) or [0.0]
        return {"requests": self.requests, "ok": self.ok, "errors": len(self.errors), "cut_by_kill": self.cut,
                "retried": self.retried, "p50_ms": round(statistics.median(ms), 1),
                "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 1), "first_errors": self.errors[:5]}  # fmt: skip


class Load:
    """Users of each kind for ``seconds``; ``kill`` is called once, ``kill_at`` seconds in, and returns when
    the killed processes are gone."""

    def __init__(self, plan: LoadPlan, seconds: float, kill_at: float, kill: Callable[[], None]) -> None:
        self.plan, self.seconds, self.kill_at, self.kill = plan, seconds, kill_at, kill
        self.tallies = {kind: Tally() for kind in KINDS}
        self.killed_at: float | None = None
        self.gone_at: float | None = None
        self.acknowledged: dict[str, dict[str, Any]] = {}  # job id -> its request
        self.unacknowledged: list[str] = []  # keys given up on
        self.finished: dict[str, tuple[str, list[dict[str, Any]]]] = {}  # job id -> status, results
        self._pending: deque[str] = deque()
        self._stop = 0.0

    async def run(self, base: str, drain_s: float) -> None:
        """The load, then up to ``drain_s`` more to follow the acknowledged jobs to their end."""
        self._stop = time.monotonic() + self.seconds
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
            users = [self._open(client, n) for n in range(self.plan.users["open"])]
            users += [self._submit(client, n) for n in range(self.plan.users["submit"])]
            users += [self._portal(client, n) for n in range(self.plan.users["portal"])]
            follower = asyncio.create_task(self._follow(client, drain_s))
            await asyncio.gather(self._killer(), *users)
            await follower

    def _running(self) -> bool:
        return time.monotonic() < self._stop

    async def _killer(self) -> None:
        await asyncio.sleep(self.kill_at)
        self.killed_at = time.monotonic()
        await asyncio.to_thread(self.kill)  # the other users go on meanwhile
        self.gone_at = time.monotonic()

    async def _request(self, client: httpx.AsyncClient, kind: str, method: str, url: str, expect: tuple[int, ...],
                       **kwargs: Any) -> httpx.Response | None:  # fmt: skip
        tally = self.tallies[kind]
        tally.requests += 1
        started = time.monotonic()
        try:
            response = await client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            self._failed(tally, started, f"{type(exc).__name__} {method} {url}")
            return None
        if response.status_code not in expect:
            self._failed(tally, started, f"{response.status_code} {method} {url}: {response.text[:200]}")
            return None
        tally.ok += 1
        tally.seconds.append(time.monotonic() - started)
        return response

    def _failed(self, tally: Tally, started: float, what: str) -> None:
        if self.killed_at is not None and (self.gone_at is None or started <= self.gone_at):
            tally.cut += 1
        else:
            tally.errors.append(what)

    async def _open(self, client: httpx.AsyncClient, n: int) -> None:
        items = self.plan.items
        while self._running():
            item, breakdown = items[n % len(items)], BREAKDOWNS[n % len(BREAKDOWNS)]
            url = f"/v1/open/instruments/gss/items/{item}/distribution"
            await self._request(client, "open", "GET", url, (200,), params={"breakdowns": breakdown},
                                headers=self.plan.reader)  # fmt: skip
            n += 1
            await asyncio.sleep(PAUSE_S)

    async def _portal(self, client: httpx.AsyncClient, n: int) -> None:
        codes = self.plan.codes
        while self._running():
            page = "/v1/participant/me" if n % 2 else "/v1/participant/audit"
            auth = {"Authorization": f"Bearer {codes[n % len(codes)]}"}
            await self._request(client, "portal", "GET", page, (200,), headers=auth)
            n += 1
            await asyncio.sleep(PAUSE_S)

    async def _submit(self, client: httpx.AsyncClient, n: int) -> None:
        agents, count = self.plan.agents, 0
        while self._running():
            key = f"load-{n}-{count}"
            # An open question never asked before: every job reaches the workers' endpoint.
            chosen = [agents[(2 * count + n) % len(agents)], agents[(2 * count + n + 1) % len(agents)]]
            body = {"kind": "open", "questions": [f"What do you remember of day {count} (user {n})?"],
                    "agents": chosen}  # fmt: skip
            await self._submit_once(client, key, body)
            count += 1
            await asyncio.sleep(PAUSE_S)

    async def _submit_once(self, client: httpx.AsyncClient, key: str, body: dict[str, Any]) -> None:
        url = f"/v1/projects/{self.plan.project}/jobs"
        headers = {**self.plan.member, "Idempotency-Key": key}
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            response = await self._request(client, "submit", "POST", url, (200, 202, 409), json=body, headers=headers)
            if response is not None and response.status_code in (200, 202):
                job = response.json()["id"]
                self.acknowledged[job] = body
                self._pending.append(job)
                return
            self.tallies["submit"].retried += 1
            await asyncio.sleep(1)
        self.unacknowledged.append(key)

    async def _follow(self, client: httpx.AsyncClient, drain_s: float) -> None:
        """Poll the oldest unfinished job; when it has ended, read its results."""
        while self._running() or (self._pending and time.monotonic() < self._stop + drain_s):
            if not self._pending:
                await asyncio.sleep(0.2)
                continue
            job = self._pending[0]
            status = await self._request(client, "results", "GET", f"/v1/jobs/{job}", (200,), headers=self.plan.member)
            if status is None or status.json()["status"] not in FINAL:
                self._pending.rotate(-1)
                await asyncio.sleep(0.2)
                continue
            results = await self._request(client, "results", "GET", f"/v1/jobs/{job}/results", (200,),
                                          headers=self.plan.member)  # fmt: skip
            if results is not None:
                self.finished[job] = (status.json()["status"], results.json())
                self._pending.popleft()
