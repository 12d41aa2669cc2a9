"""Shared helpers of the tests (moved from ``tests.agentbank.providers.test_pacing``)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import respx

from agentbank.providers.openai_compat import OpenAICompatibleChatModel

MESSAGES = [{"role": "system", "content": "You are Ada. " * 100}, {"role": "user", "content": "Tell me."}]


class SlowEndpoint(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that takes ``delay`` seconds and reports llama.cpp's timings."""

    delay = 0.0

    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        time.sleep(self.delay)
        body = json.dumps({
            "id": "c1", "object": "chat.completion", "created": 0, "model": "slow",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 2, "total_tokens": 42},
            "timings": {"prompt_per_second": 20.0, "predicted_per_second": 4.0},
        }).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def slow_endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowEndpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    SlowEndpoint.delay = 0.0


SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["1", "2"]}},
    "required": ["answer"],
    "additionalProperties": False,
}


MESSAGES = [{"role": "system", "content": "You are Ada."}, {"role": "user", "content": "Favour? 1 or 2"}]


KEY = "sk-test-key-that-must-not-leak"


def completion(content: str, *, prompt=120, cached=100, completion_tokens=7) -> dict:
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "served-model",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


BASE = "http://127.0.0.1:9/v1"


def answering(respx_mock, *answers, path: str = "/chat/completions") -> respx.Route:
    """The endpoint's route, answering in turn with (status, body, headers) or raising an exception."""
    replies = [a if isinstance(a, Exception) else httpx.Response(a[0], json=a[1], headers=a[2]) for a in answers]
    return respx_mock.post(BASE + path).mock(side_effect=replies)


def model(sleeps: list[float], **kwargs) -> OpenAICompatibleChatModel:
    return OpenAICompatibleChatModel(
        model="test-model",
        base_url=BASE,
        api_key=KEY,
        http_client=httpx.Client(),
        sleep=sleeps.append,
        **kwargs,
    )
