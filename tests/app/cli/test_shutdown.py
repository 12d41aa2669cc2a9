"""Ctrl-C on `agentbank serve`, or SIGTERM to `agentbank worker`, with a build in flight: the process
stops within the grace period, says so without a traceback, and the interrupted build is back in the
queue with its attempts unchanged."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from agentbank.building.agents import BUILD_QUEUE, queue_builds
from agentbank.building.transcripts import store_interview
from agentbank.providers.fakes import minimal_answer
from tests.support.factories import SECRET, interview, process_keyring
from tests.support.servers import free_port

pytestmark = [pytest.mark.slow, pytest.mark.cli]

GRACE_S = 3
# Past the grace: the server's own stop, closing the models and stopping nothing else (the database is
# external here), on a busy machine.
STOP_MARGIN_S = 12


class HangingModel(BaseHTTPRequestHandler):
    """A chat endpoint far slower than any grace: each call would take a minute."""

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        time.sleep(60)
        schema = (request.get("response_format") or {}).get("json_schema", {}).get("schema")
        content = json.dumps(minimal_answer(schema)) if schema else "ok"
        body = json.dumps({
            "id": "c1", "object": "chat.completion", "created": 0, "model": "slow",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 2, "total_tokens": 42},
        }).encode()  # fmt: skip
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client hung up
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def hanging_model() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), HangingModel)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def read_until(process: subprocess.Popen, lines: list[str], needle: str, seconds: float) -> None:
    def pump() -> None:
        for line in process.stdout:
            lines.append(line)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + seconds
    while not any(needle in line for line in lines):
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            raise AssertionError(f"never saw {needle!r}:\n{''.join(lines)}")
        time.sleep(0.1)


def queue_one_build(url: str) -> None:
    engine = create_engine(url)
    with Session(engine) as session, session.begin():
        store_interview(session, interview("file:stop.json", 40), process_keyring(url))
        queue_builds(session)
    engine.dispose()


@pytest.mark.parametrize(
    ("command", "stop_signal", "exit_code"),
    [(["serve", "--port"], signal.SIGINT, 0), (["worker"], signal.SIGTERM, 128 + signal.SIGTERM)],
    ids=["serve-ctrl-c", "worker-sigterm"],
)
def test_a_stop_with_a_build_in_flight_is_in_order_and_keeps_the_attempt(
    fresh_database, hanging_model, command, stop_signal, exit_code
):
    env = {
        **os.environ, "COLUMNS": "200",
        "AGENTBANK_DATABASE_URL": fresh_database, "AGENTBANK_SECRET_KEY": SECRET,
        "AGENTBANK_CHAT_PROVIDER": "openai", "AGENTBANK_CHAT_BASE_URL": hanging_model, "AGENTBANK_CHAT_MODEL": "slow",
        "AGENTBANK_CHAT_MAX_RETRIES": "0", "AGENTBANK_SHUTDOWN_GRACE_S": str(GRACE_S),
    }  # fmt: skip
    if command[0] == "serve":
        command = [*command, str(free_port())]  # seeds the empty bank with the demo and builds it
    else:
        queue_one_build(fresh_database)
    process = subprocess.Popen(
        [sys.executable, "-c", "from app.cli import main; main()", *command],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    lines: list[str] = []
    read_until(process, lines, "reflection by a psychologist", 180)  # the build waits on the model now

    os.killpg(process.pid, stop_signal)  # as Ctrl-C in a terminal does: the whole process group
    began = time.monotonic()
    try:
        process.wait(GRACE_S + STOP_MARGIN_S)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"still running {GRACE_S + STOP_MARGIN_S} s after the signal:\n{''.join(lines)}") from None
    took = time.monotonic() - began
    time.sleep(0.2)  # the last lines
    output = "".join(lines)
    assert process.returncode == exit_code, output
    assert took >= GRACE_S - 0.5, output  # the build in flight was given its grace
    assert "Traceback" not in output and "ERROR" not in output, output
    # Every task in flight (one per call in flight for a remote model: the demo queued several builds).
    assert re.search(r"put [1-9]\d* unfinished task\(s\) back in the queue", output), output

    engine = create_engine(fresh_database)
    with engine.connect() as conn:
        builds = conn.execute(
            text("SELECT status::text, attempts, worker_id FROM procrastinate_jobs WHERE queue_name = :q"),
            {"q": BUILD_QUEUE},
        ).all()
        failures = conn.scalar(text("SELECT count(*) FROM build_failures"))
    engine.dispose()
    assert builds and all(row == ("todo", 0, None) for row in builds), builds
    assert failures == 0
