"""Shared helpers of the tests (moved from ``tests.agentbank.providers.test_pacing``)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

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
