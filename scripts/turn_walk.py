"""The walk of one interview's chunk and end of turn, counted: how far a frame of a spoken answer travels
from the router's handler to its acknowledgement, and the answer to the interviewer's next question stored.

    python scripts/turn_walk.py [--tree]

One interview on a temporary embedded PostgreSQL (migrated), through the real application with a
scripted chat model and the fake transcriber: a typed first answer, a spoken second answer uploaded as
a chunk (``PUT .../turns/{turn}/chunks/0``, the first request walked), then ``POST .../turns/{turn}/end``
(the second). Calls are traced with
``sys.setprofile`` from the moment the handler is entered until it returns (its dependencies, run
before it, and the notes taken after the response are not part of the walk). Only project code counts
(``agentbank/``, ``interviewer/``, ``app/``); library code in between is transparent.

- stops: calls that enter a file of the turn's own code (``interviewer/``, ``app/``) from another file
  (the handler itself is the first); calls within a file are that file's own business, and calls into
  the bank (``agentbank/``) are counted apart, as the work the walk asks of what lies below it;
- files: the turn's files the walk enters; returns: stops into a file the walk had already entered
  (coming back to it); climbs: stops into a file still on the call stack (back up to a caller's file);
- ``interviews.py`` entries: stops into ``interviewer/session/interviews.py``;
- key unwraps: ``KeyRing.data_key`` calls; transcript decryptions: ``load_turns`` calls.

``--tree`` prints the stops as a tree, each with its file and function.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import threading
import wave
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SECRET = "turn-walk-secret-that-is-long-enough-to-be-accepted"  # noqa: S105 - a throwaway database's
CONSENT = {"recording": True, "use": True, "withdrawal": True}
PROJECT = tuple(str(ROOT / package) + os.sep for package in ("agentbank", "interviewer", "app"))
WATCHED = {"data_key": "unwraps", "load_turns": "decryptions"}
FRAME_BYTES = 16_000 * 2 // 10  # 100 ms of 16 kHz 16-bit mono, after the WAV's 44-byte header


@dataclass
class Walk:
    """The stops of one traced call, in order: (depth, file, function, caller's file, files on the stack)."""

    stops: list[tuple[int, str, str, str, frozenset[str]]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(WATCHED.values(), 0))


class Tracer:
    """Traces project calls inside the calls of some functions (a walk for each), in the thread that makes it."""

    def __init__(self, *targets: Any) -> None:
        self.walks = {target.__code__: Walk() for target in targets}
        self.walk = Walk()
        self._local = threading.local()

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event not in ("call", "return"):
            return
        state = self._local.__dict__
        if event == "call" and frame.f_code in self.walks and "stack" not in state:
            state["stack"] = []  # frames of project code: (frame, file, stop index or None)
            self.walk = self.walks[frame.f_code] = Walk()  # the last call of each target is its walk
        stack = state.get("stack")
        if stack is None:
            return
        filename = frame.f_code.co_filename
        if not filename.startswith(PROJECT):
            return
        relative = os.path.relpath(filename, ROOT)
        if event == "call":
            name = frame.f_code.co_qualname
            counted = WATCHED.get(frame.f_code.co_name)
            if counted is not None:
                self.walk.counts[counted] += 1
            caller = stack[-1][1] if stack else None
            stop = None
            if caller != relative:
                stop = len(self.walk.stops)
                depth = sum(1 for _, _, index in stack if index is not None)
                self.walk.stops.append((depth, relative, name, caller or "", frozenset(f for _, f, _ in stack)))
            stack.append((frame, relative, stop))
            return
        if stack and stack[-1][0] is frame:
            stack.pop()
            if not stack:
                del state["stack"]  # the target returned: the walk is over


def figures(walk: Walk) -> dict[str, int]:
    """The walk's figures, as the module's docstring defines them."""
    own = [stop for stop in walk.stops if not stop[1].startswith("agentbank" + os.sep)]
    entered: set[str] = set()
    returns = 0
    for _, file, *_ in own:
        returns += file in entered
        entered.add(file)
    return {
        "stops": len(own),
        "files": len(entered),
        "returns": returns,
        "climbs": sum(1 for _, file, _, _, above in own if file in above),
        "interviews.py entries": sum(1 for _, file, *_ in own if file == "interviewer/session/interviews.py"),
        "calls into the bank": len(walk.stops) - len(own),
        "key unwraps": walk.counts["unwraps"],
        "transcript decryptions": walk.counts["decryptions"],
    }


def wav(seconds_of_tone: float, silence_s: float) -> bytes:
    """A 16 kHz mono WAV: a little silence, a tone the fake transcriber hears as words, then silence."""
    rate = 16_000
    lead = np.zeros(rate // 4, np.float32)
    tone = 0.3 * np.sin(2 * np.pi * 220 * np.arange(int(seconds_of_tone * rate)) / rate)
    samples = np.concatenate([lead, tone.astype(np.float32), np.zeros(int(silence_s * rate), np.float32)])
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((samples * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


def decide(messages: Any, schema: dict[str, Any] | None) -> Any:
    """The scripted interviewer: moves on after every answer, notes one fact when asked."""
    if schema is None:
        return ""  # a warm-up: nothing is read from it
    if "notes" in schema.get("properties", {}):
        return {"notes": ["Grew up by the sea."]}
    return {"decision": {"action": "next"}}


def walk_one_end_of_turn(url: str) -> Walk:
    """The walk of the end of turn alone (see ``walk_a_chunk_and_its_end_of_turn``)."""
    return walk_a_chunk_and_its_end_of_turn(url)["end of turn"]


def walk_a_chunk_and_its_end_of_turn(url: str) -> dict[str, Walk]:
    """The walks of one chunk's request and of the end of turn's, by name."""
    from fastapi.testclient import TestClient
    from sqlalchemy import create_engine
    from sqlalchemy.orm import sessionmaker

    from agentbank.audit import log as audit
    from agentbank.core.settings import Settings
    from agentbank.keys.crypto import KeyRing
    from agentbank.keys.keystore import MemoryKeyStore
    from agentbank.providers.fakes import ScriptedChatModel
    from agentbank.runtime.bank import Bank
    from app.api import create_app
    from app.api.interviews import router
    from app.api.interviews.dependencies import get_services
    from interviewer.deciding.speculation import SpeculativeChat
    from interviewer.hearing.transcription import FakeTranscriber
    from interviewer.services import Services
    from interviewer.session import invitations

    engine = create_engine(url)
    data = Path(tempfile.mkdtemp(prefix="turn-walk-data-"))
    settings = Settings(secret_key=SECRET, data_dir=data, rate_limit_per_minute=10_000)
    bank = Bank(settings, engine, sessionmaker(engine, expire_on_commit=False), KeyRing(SECRET, MemoryKeyStore()))
    # As a server has it: one decider whose decisions may start ahead, wrapping the interviewer's model.
    chat = SpeculativeChat(ScriptedChatModel(decide))
    services = Services(keys=bank.keys, chat=chat, transcriber=FakeTranscriber())
    tracer = Tracer(router.put_chunk, router.end_turn)
    threading.setprofile(tracer)  # the handler runs in a worker thread started after this
    sys.setprofile(tracer)
    try:
        app = create_app(settings, bank)
        app.dependency_overrides[get_services] = lambda: services
        with TestClient(app, base_url="http://localhost") as client:
            with bank.sessions() as session, session.begin():
                code = invitations.create_invitation(session, audit.Actor("operator", "turn-walk"))
            started = client.post("/v1/interviews", json={"invite": code, "consent": CONSENT})
            headers = {"Authorization": f"Bearer {started.json()['token']}"}
            typed = client.post("/v1/interviews/current/answer", json={"text": "By the sea."}, headers=headers)
            assert typed.status_code == 200, typed.text
            chat.settle(30)
            turn = typed.json()["turn"]
            # In frames of 100 ms, as the page sends them; the last one's request is the chunk walked.
            recording = wav(1.5, 3.0)
            frames = [recording[:44 + FRAME_BYTES], *(recording[at : at + FRAME_BYTES]
                      for at in range(44 + FRAME_BYTES, len(recording), FRAME_BYTES))]  # fmt: skip
            for seq, piece in enumerate(frames):
                put = client.put(f"/v1/interviews/current/turns/{turn}/chunks/{seq}", content=piece,
                                 headers={**headers, "Content-Type": "audio/wav"})  # fmt: skip
                assert put.status_code == 200, put.text
            chat.settle(30)
            ended = client.post(f"/v1/interviews/current/turns/{turn}/end", headers=headers)
            assert ended.status_code == 200, ended.text
            assert ended.json()["turn"] == turn + 2, ended.json()
            chat.settle(30)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        chat.stop()
        engine.dispose()
        shutil.rmtree(data, ignore_errors=True)
    return {"chunk": tracer.walks[router.put_chunk.__code__], "end of turn": tracer.walks[router.end_turn.__code__]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="store_true", help="print the stops as a tree")
    args = parser.parse_args()

    from agentbank.db.embedded import start_embedded_server, stop_embedded_server
    from migrations.runner import alembic_config, upgrade

    root = Path(tempfile.mkdtemp(prefix="turn-walk-"))
    try:
        server = start_embedded_server(root / "postgres")
        upgrade(alembic_config(server.url))
        walks = walk_a_chunk_and_its_end_of_turn(server.url)
    finally:
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)
    for title, walk in walks.items():
        print(f"# {title}")
        if args.tree:
            for depth, file, name, _, above in walk.stops:
                mark = "  ^" if file in above else ""
                print(f"{'  ' * depth}{name}  ({file}){mark}")
        for name, value in figures(walk).items():
            print(f"{name}: {value}")


if __name__ == "__main__":
    main()
