"""A local OpenAI-compatible chat endpoint with a fixed latency and no limit of concurrency.

Every call waits ``--latency`` seconds and returns a minimal answer valid under the request's JSON
schema, with token counts. With ``--requests-per-minute`` it answers HTTP 429 with ``Retry-After``
beyond that rate in any 60-second window, as hosted endpoints do. ``GET /stats`` counts the calls
received (429s among them), those answered and the 429s: a benchmark's ideal is computed from the
calls made, which the tasks that made them do not tell (a population task makes one per item).

Run: python -m benchmarks.latency_server --port 8731 --latency 0.5
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import subprocess
import time
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agentbank.providers.fakes import minimal_answer
from benchmarks.common import local_stats, start_local


def make_app(latency_s: float, requests_per_minute: int | None) -> Starlette:
    """The endpoint's application: chat completions and the counts."""
    stats: dict[str, float] = {"calls": 0, "answered": 0, "rate_limited": 0, "in_flight": 0, "peak_in_flight": 0,
                               "first_call_at": 0.0, "last_answer_at": 0.0}  # fmt: skip
    recent: collections.deque[float] = collections.deque()

    async def completions(request: Request) -> JSONResponse:
        body: dict[str, Any] = await request.json()
        stats["calls"] += 1
        stats["first_call_at"] = stats["first_call_at"] or time.time()  # wall clock: read by other processes
        now = time.monotonic()
        while recent and recent[0] <= now - 60:
            recent.popleft()
        if requests_per_minute is not None and len(recent) >= requests_per_minute:
            stats["rate_limited"] += 1
            retry = max(1, round(recent[0] + 60 - now))
            return JSONResponse({"error": {"message": "rate limited"}}, 429, headers={"retry-after": str(retry)})
        recent.append(now)
        stats["in_flight"] += 1
        stats["peak_in_flight"] = max(stats["peak_in_flight"], stats["in_flight"])
        try:
            await asyncio.sleep(latency_s)
        finally:
            stats["in_flight"] -= 1
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
        content = json.dumps(minimal_answer(schema)) if schema else "Nothing to add."
        prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        stats["answered"] += 1
        stats["last_answer_at"] = time.time()
        return JSONResponse(
            {
                "id": f"c{stats['calls']}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fixed-latency"),
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": len(content.split()),
                    "total_tokens": prompt + len(content.split()),
                },
            }
        )

    async def counts(_: Request) -> JSONResponse:
        return JSONResponse(stats)

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"]),
                             Route("/stats", counts)])  # fmt: skip


def start(port: int, latency: float, limit: int | None) -> subprocess.Popen[bytes]:
    """Run the endpoint in a process of its own and return once it answers."""
    limits = ["--requests-per-minute", str(limit)] if limit else []
    return start_local("benchmarks.latency_server", port, "--latency", str(latency), *limits, what="endpoint")


def stats(port: int) -> dict[str, float]:
    """The endpoint's counts: calls (received, 429s included), answered, rate_limited, in_flight,
    peak_in_flight; and the wall-clock times (``time.time()``) of its first call and its last answer."""
    return local_stats(port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8731)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds every call takes")
    parser.add_argument("--requests-per-minute", type=int, default=None, help="answer 429 beyond this rate")
    args = parser.parse_args()
    app = make_app(args.latency, args.requests_per_minute)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", backlog=4096)


if __name__ == "__main__":
    main()
