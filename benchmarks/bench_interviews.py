"""How many spoken interviews one machine holds at once: N simulated participants against a real API server,
each speaking at real pace, and how long each waits for the interviewer as N grows.

The server is ``agentbank serve`` in a process of its own (``tests.support.servers.ServerProcess``, as the
browser tests start it) on a fresh embedded PostgreSQL; every participant is a thread with its own kept-alive
connection that talks to it as ``app/web/interview.html`` does: an invitation (made as an operator makes one),
``POST /v1/interviews`` with consent, the opening question's audio (``GET .../speech?part=n``, sentence by
sentence, listened to for up to ``--listen-s``), then for each answer a take (``POST .../turns/{turn}/takes``),
the recording in frames of 100 ms (``PUT .../turns/{turn}/chunks/{n}?take=``: Opus in WebM cut where each
timeslice's cluster ends, as Chromium's MediaRecorder hands them over, ``bench_voice.browser_chunks``), one
request at a time with every frame recorded while the last was on its way, until a reply says the turn has
ended; then the frames recorded meanwhile, ``POST .../turns/{turn}/end?take=`` (the next question's text in
the state), and the next question's first audio. A 409 ``interview_busy`` is tried again after 0.3 s, and a
frame refused with a 5xx or a 429 after a growing pause, as the page does.

The answers are a handful from ``voice_corpus``, spoken once by the embedded Piper voice at the start and
reused: some with a pause inside a sentence (after a filler, a conjunction), some that go on after a finished
sentence (``voice_corpus.GOING_ON``), at the corpus's pause lengths, each followed by silence longer than any
wait. Each frame leaves when its 100 ms of audio is over, so a participant speaks at real pace; participants
start at random moments over the first seconds and take the answers in turn from different places, so they
are not in lockstep.

Per answer, from the end of speech (known from the audio; for an answer the turn cut off, the end of the
speech before the pause it was ended in): to the reply saying the turn has ended, and to the next question's
first audio received whole; between them, the end of the turn to the next question's text, the server's own
share (a scripted question's audio comes from the speech cache, a follow-up's is synthesized). A cut-off is
a turn ended before the answer's last word (LiveKit's definition: any ending while the person meant to go
on); an answer whose turn never ended is ended by the participant ("I'm done") once its silence is spent.
For each N of the ladder, every participant gives ``--answers`` answers; a step passes when its p95 of end
of speech to first audio is within ``--limit-s`` (3 s) and it had no error; the ladder stops at the first
step that does not pass (once, not twice in a row: the figure is then the largest N before it, all smaller
ones having passed). Each step begins a couple of seconds after the last, so that the notes the server takes
on the last answers (after their replies) fall outside it. The machine's load is shown beside each step: the
participants run on the same machine as the server, and other work on it distorts every figure.

Two backends. ``--embedded``: the server's own chat model, Whisper and Piper. Remote fakes (``--remote``, the
default with it): chat at ``benchmarks.latency_server`` and speech at ``benchmarks.speech_server``, each
answering every call after ``--latency`` (0.3 s) with no limit of concurrency; the fake transcriber hears
the same finished sentence at every pause, so its cut-off rate is the words' worst case, not the voice's.

Frames travel as HTTP requests, one per 100 ms frame (ten a second per participant while they speak; several
in one when the last request was slow, as the page sends them). Whether a WebSocket would gain is a question
of the server's CPU per frame: the table gives the server's CPU over each step (from /proc), all its work
included, divided by the frames it received, and the database's; before the ladder, the CPU of a bare HTTP
request (``/v1/health``) and of an authenticated one that reads the interview (``GET /v1/interviews/current``),
which is about what a frame pays that a frame on an open socket would not. When a frame costs a few times
that floor, most of its cost is hearing it, which no transport removes.

Run: python -m benchmarks.bench_interviews [--quick] [--embedded | --remote] [--answers 3]
     [--remote-ladder 1,2,4] [--embedded-ladder 1,2] [--latency 0.3] [--listen-s 8] [--results DIR]
(--quick: embedded 1, 2 and remote 1, 5, 10, 20 with 2 answers each, within about five minutes on two
cores; the default and the quick ladders are saved, to ``benchmarks/results`` or ``--results``.)
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psutil
from rich.console import Console
from rich.table import Table
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from benchmarks import latency_server, speech_server, voice_corpus
from benchmarks.bench_voice import browser_chunks
from benchmarks.common import RESULTS, free_port, save

REMOTE_LADDER, EMBEDDED_LADDER, ANSWERS = (1, 2, 4, 8, 12, 16, 20, 24, 32), (1, 2, 3, 4), 3
QUICK_REMOTE, QUICK_EMBEDDED, QUICK_ANSWERS, QUICK_LISTEN_S = (1, 5, 10, 20), (1, 2), 2, 2.0
LIMIT_S = 3.0  # p95 of end of speech to the next question's first audio
LATENCY_S = 0.3  # each remote fake's answer
LISTEN_S = 8.0  # the longest a participant listens to a question before answering
STAGGER_S = 3.0  # participants start at random moments over this long
SETTLE_S = 2.0  # before each step: the server's notes on the last step's answers run off the clock
FRAME_S = 0.1  # the page's MediaRecorder timeslice
BUSY_PAUSE_S, BUSY_ATTEMPTS = 0.3, 20  # as the page's api() does on interview_busy
# The floor of a request's CPU: the least of a few batches, as work the server does meanwhile (an embedded model
# taking notes on the warm-up's answer) adds to some of them.
CALIBRATION_BATCHES, CALIBRATION_REQUESTS = 5, 40
CONSENT = {"recording": True, "use": True, "withdrawal": True}
WEBM = {"Content-Type": "audio/webm"}
SEED = 7
# The corpus's answers used: (index, pause) inside a sentence, and going on after a finished one.
INSIDE = (0, 5, 10, 15)
GOING_ON = (0, 4, 8)
QUICK_INSIDE, QUICK_GOING_ON = (0, 10), (4,)
console = Console(width=200)


# --- the answers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Spoken:
    """One answer as the page sends it: its frames, and where each stretch of its speech ends (seconds)."""

    name: str
    frames: list[bytes]
    speech_ends_s: tuple[float, ...]  # the last is the answer's last word
    pause_s: float

    @property
    def last_word_s(self) -> float:
        return self.speech_ends_s[-1]

    def heard_end_s(self, ended_s: float) -> float:
        """The end of speech a turn ended at ``ended_s`` answered: the last stretch of speech before it."""
        return max((end for end in self.speech_ends_s if end <= ended_s), default=self.speech_ends_s[0])


def spoken(name: str, first: np.ndarray, pause_s: float, second: np.ndarray) -> Spoken:
    lead, rate = voice_corpus.LEAD_S, voice_corpus.RATE
    audio = np.concatenate([voice_corpus.silence(lead), first, voice_corpus.silence(pause_s), second,
                            voice_corpus.silence(voice_corpus.TRAIL_S)])  # fmt: skip
    ends = (lead + len(first) / rate, lead + (len(first) + len(second)) / rate + pause_s)
    return Spoken(name, browser_chunks(audio), ends, pause_s)


def answers(quick: bool) -> list[Spoken]:
    """The answers, spoken by Piper once (a pause inside a sentence, or between two finished sentences)."""
    inside, going = (QUICK_INSIDE, QUICK_GOING_ON) if quick else (INSIDE, GOING_ON)
    made = []
    for i in inside:
        first, second = voice_corpus.pieces(*voice_corpus.ANSWERS[i])
        made.append(spoken(f"inside-{i}", first, voice_corpus.pause_for(i, len(voice_corpus.ANSWERS)), second))
    for i in going:
        pause = voice_corpus.pause_between(i, len(voice_corpus.GOING_ON))
        first, second = (voice_corpus.speech(s) for s in voice_corpus.GOING_ON[i])
        made.append(spoken(f"going-on-{i}", first, pause, second))
    return made


# --- a participant -------------------------------------------------------------------------


class RequestFailedError(RuntimeError):
    """A request the page would have shown as an error."""


@dataclass
class Answered:
    """One answer's clocks (seconds) and what became of its turn."""

    answer: str
    budget_s: int  # the question's time budget: at 60 s or more a finished thought waits longer
    speech_end_to_eot: float
    speech_end_to_audio: float
    eot_to_text: float  # the turn's end to the next question's text (POST .../end answered)
    eot_to_audio: float
    cut_off: bool
    heard_end: bool  # the server ended the turn (not the participant's "I'm done")
    frames: int
    requests: int
    frame_wait_max: float  # the longest a recorded frame waited for its request to leave


@dataclass
class Participant:
    """A simulated person: a kept-alive connection, the interview's state, and their answers' clocks."""

    base: str
    code: str
    answers: list[Spoken]
    offset: int
    count: int
    listen_s: float
    done: list[Answered] = field(default_factory=list)
    error: str | None = None
    token: str | None = None
    retries: int = 0

    def run(self, start_at: float) -> None:
        time.sleep(max(0.0, start_at - time.perf_counter()))
        try:
            with httpx.Client(base_url=self.base, timeout=120) as client:
                started = self.call(client, "POST", "/v1/interviews", json={"invite": self.code, "consent": CONSENT})
                self.token, state = started["token"], started["state"]
                client.headers["Authorization"] = f"Bearer {self.token}"
                self.call(client, "GET", "/v1/interviews/current/speech/acknowledgement", raw=True)  # kept by the page
                self.listen(client, None)
                for k in range(self.count):
                    state, first = self.answer(client, state, self.answers[(self.offset + k) % len(self.answers)])
                    self.listen(client, first)
        except (RequestFailedError, httpx.HTTPError) as exc:
            self.error = f"{type(exc).__name__}: {exc}"[:300]

    def call(self, client: httpx.Client, method: str, path: str, *, raw: bool = False, frame: bool = False,
             **kwargs: Any) -> Any:  # fmt: skip
        """A request as the page's ``api()`` makes it (a frame as its ``upload()``): the JSON body, or the response."""
        for attempt in range(BUSY_ATTEMPTS):
            try:
                response = client.request(method, path, **kwargs)
            except httpx.TransportError:
                if not frame or attempt == BUSY_ATTEMPTS - 1:
                    raise
                self.retries += 1
                time.sleep(min(8.0, 0.5 * 2**attempt))
                continue
            if response.is_success:
                return response if raw else response.json()
            code = _error_code(response)
            if code == "interview_busy":
                self.retries += 1
                time.sleep(BUSY_PAUSE_S)
                continue
            if frame and (response.status_code >= 500 or response.status_code == 429):
                self.retries += 1
                time.sleep(min(8.0, 0.5 * 2**attempt))
                continue
            raise RequestFailedError(f"{method} {path}: {response.status_code} {code or response.text[:120]}")
        raise RequestFailedError(f"{method} {path}: still refused after {BUSY_ATTEMPTS} attempts")

    def listen(self, client: httpx.Client, first: httpx.Response | None) -> None:
        """The question spoken sentence by sentence, the next fetched while one plays, for up to ``listen_s``."""
        began, part, n = time.perf_counter(), first, 0
        if part is None:
            part = self.call(client, "GET", "/v1/interviews/current/speech", params={"part": 0}, raw=True)
        parts = int(part.headers.get("X-Speech-Parts", "1"))
        while True:
            ends = time.perf_counter() + speech_server.wav_seconds(part.content)
            if ends - began >= self.listen_s or n + 1 >= parts:
                time.sleep(max(0.0, min(ends, began + self.listen_s) - time.perf_counter()))
                return
            n += 1
            part = self.call(client, "GET", "/v1/interviews/current/speech", params={"part": n}, raw=True)
            time.sleep(max(0.0, ends - time.perf_counter()))

    def answer(self, client: httpx.Client, state: dict[str, Any], said: Spoken) -> tuple[dict[str, Any], Any]:
        """One spoken answer at real pace, timed; the state after it and the next question's first audio."""
        turn, budget = state["turn"], int(state["seconds_budget"])
        take = self.call(client, "POST", f"/v1/interviews/current/turns/{turn}/takes")["take"]
        frames = said.frames
        began = time.perf_counter()
        sent = requests = 0
        ended_at: float | None = None
        waited = 0.0

        def put(upto: int) -> bool:
            nonlocal sent, requests, waited
            waited = max(waited, time.perf_counter() - (began + (sent + 1) * FRAME_S))
            reply = self.call(client, "PUT", f"/v1/interviews/current/turns/{turn}/chunks/{requests}",
                              params={"take": take}, content=b"".join(frames[sent:upto]), headers=WEBM,
                              frame=True)  # fmt: skip
            sent, requests = upto, requests + 1
            return bool(reply["end_of_turn"])

        while sent < len(frames):
            recorded = min(len(frames), int((time.perf_counter() - began) / FRAME_S))
            if recorded <= sent:  # the next frame leaves when its audio is over
                time.sleep(max(0.0, began + (sent + 1) * FRAME_S - time.perf_counter()))
                continue
            if put(recorded):
                ended_at = time.perf_counter()
                break
        heard_end = ended_at is not None
        if ended_at is None:  # the silence is spent and the turn never ended: the person says they are done
            ended_at = time.perf_counter()
        ended_s = sent * FRAME_S  # the audio the server had heard when it said the turn had ended
        recorded = min(len(frames), int((time.perf_counter() - began) / FRAME_S))
        if recorded > sent:  # the recorder's last piece, stopped at the end of the turn
            put(recorded)
        state = self.call(client, "POST", f"/v1/interviews/current/turns/{turn}/end", params={"take": take})
        text_at = time.perf_counter()
        first = self.call(client, "GET", "/v1/interviews/current/speech", params={"part": 0}, raw=True)
        audio_at = time.perf_counter()
        speech_end = began + said.heard_end_s(ended_s)
        self.done.append(Answered(
            answer=said.name, budget_s=budget, speech_end_to_eot=ended_at - speech_end,
            speech_end_to_audio=audio_at - speech_end, eot_to_text=text_at - ended_at, eot_to_audio=audio_at - ended_at,
            cut_off=heard_end and ended_s < said.last_word_s - 0.05, heard_end=heard_end, frames=sent,
            requests=requests, frame_wait_max=waited,
        ))  # fmt: skip
        return state, first


def _error_code(response: httpx.Response) -> str | None:
    try:
        return str(response.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return None


# --- the server and its load ---------------------------------------------------------------


@contextmanager
def embedded_database() -> Iterator[Any]:
    """A temporary embedded PostgreSQL (the server migrates it as it starts)."""
    from agentbank.db.embedded import start_embedded_server, stop_embedded_server

    root = Path(tempfile.mkdtemp(prefix="agentbank-interviews-"))
    try:
        yield start_embedded_server(root / "postgres"), root
    finally:
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)


def invitations(database_url: str, count: int) -> list[str]:
    """``count`` invitation codes, made the way an operator makes them (``tests/app/web/conftest.py``)."""
    from agentbank.audit import log as audit
    from interviewer.session.invitations import create_invitation

    engine = create_engine(database_url)
    try:
        with Session(engine) as session, session.begin():
            return [create_invitation(session, audit.Actor("operator", "benchmark")) for _ in range(count)]
    finally:
        engine.dispose()


def cpu_s(pid: int, *, tree: bool = False) -> float:
    """CPU seconds a process has used (from /proc), with its reaped children's; ``tree``: its live ones' too."""
    try:
        process = psutil.Process(pid)
        times = process.cpu_times()
        total = times.user + times.system + times.children_user + times.children_system
        if tree:
            for child in process.children(recursive=True):
                try:
                    child_times = child.cpu_times()
                    total += child_times.user + child_times.system
                except psutil.Error:
                    pass  # a backend that ended meanwhile: its seconds are in its parent's reaped children
        return total
    except psutil.Error:
        return 0.0


@dataclass
class Target:
    """A running server to load: where it listens, its process and the database's."""

    base: str
    database_url: str
    server_pid: int
    postmaster_pid: int

    def cpu(self) -> tuple[float, float]:
        return cpu_s(self.server_pid), cpu_s(self.postmaster_pid, tree=True)


def calibrate(target: Target, token: str) -> dict[str, float]:
    """The server's CPU (ms) for a bare HTTP request and for an authenticated read of the interview, and the
    database's: the least of a few batches."""
    figures = {}
    signed_in = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=target.base, timeout=60) as client:
        for name, path, headers in (
            ("health", "/v1/health", {}),
            ("interview_read", "/v1/interviews/current", signed_in),
        ):
            batches = []
            for _ in range(CALIBRATION_BATCHES):
                server, database = target.cpu()
                for _ in range(CALIBRATION_REQUESTS):
                    client.get(path, headers=headers).raise_for_status()
                after = target.cpu()
                batches.append((after[0] - server, after[1] - database))
            figures[f"{name}_server_cpu_ms"] = round(1000 * min(b[0] for b in batches) / CALIBRATION_REQUESTS, 3)
            figures[f"{name}_database_cpu_ms"] = round(1000 * min(b[1] for b in batches) / CALIBRATION_REQUESTS, 3)
    return figures


def warm_up(target: Target, said: list[Spoken]) -> str:
    """One interview of one answer, untimed: the server loads its models; its token, for the calibration."""
    participant = Participant(target.base, invitations(target.database_url, 1)[0], said, 0, 1, 0.0)
    participant.run(time.perf_counter())
    if participant.error or participant.token is None:
        raise SystemExit(f"the warm-up interview failed: {participant.error}")
    return participant.token


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def step(target: Target, n: int, said: list[Spoken], count: int, listen_s: float, rng: random.Random) -> dict[str, Any]:
    """N participants at once, ``count`` answers each; the step's figures."""
    people = [Participant(target.base, code, said, rng.randrange(len(said)), count, listen_s)
              for code in invitations(target.database_url, n)]  # fmt: skip
    server0, database0 = target.cpu()
    client0 = cpu_s(os.getpid())
    psutil.cpu_percent(None)
    began = time.perf_counter()
    threads = [threading.Thread(target=p.run, args=(began + rng.uniform(0, STAGGER_S if n > 1 else 0),))
               for p in people]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    machine_cpu = psutil.cpu_percent(None)
    server1, database1 = target.cpu()
    done = [a for p in people for a in p.done]
    frames = sum(a.frames for a in done) or 1
    requests = sum(a.requests for a in done) or 1
    audio = [a.speech_end_to_audio for a in done]
    eot = [a.speech_end_to_eot for a in done]
    errors = [p.error for p in people if p.error]
    return {
        "participants": n, "answers": len(done), "errors": len(errors), "error_examples": errors[:3],
        "retries": sum(p.retries for p in people), "wall_s": round(wall, 1),
        "speech_end_to_audio_p50": percentile(audio, 50), "speech_end_to_audio_p95": percentile(audio, 95),
        "speech_end_to_eot_p50": percentile(eot, 50), "speech_end_to_eot_p95": percentile(eot, 95),
        "eot_to_text_p50": percentile([a.eot_to_text for a in done], 50),
        "eot_to_text_p95": percentile([a.eot_to_text for a in done], 95),
        "eot_to_audio_p50": percentile([a.eot_to_audio for a in done], 50),
        "eot_to_audio_p95": percentile([a.eot_to_audio for a in done], 95),
        "cut_off_rate": sum(a.cut_off for a in done) / max(1, len(done)),
        "no_end_heard": sum(not a.heard_end for a in done),
        "after_story_questions": sum(a.budget_s >= 60 for a in done),
        "frame_wait_max_p95": percentile([a.frame_wait_max for a in done], 95),
        "frames": frames, "frame_requests": requests,
        "server_cpu_s": round(server1 - server0, 2), "database_cpu_s": round(database1 - database0, 2),
        "client_cpu_s": round(cpu_s(os.getpid()) - client0, 2),
        # Everything the server did over the step (hearing, transcribing, deciding, speaking), per frame.
        "server_cpu_ms_per_frame": round(1000 * (server1 - server0) / frames, 2),
        "database_cpu_ms_per_frame": round(1000 * (database1 - database0) / frames, 2),
        "machine_cpu_percent": machine_cpu, "load_average_1m": round(os.getloadavg()[0], 2),
        "timings": [asdict(a) for a in done],
    }  # fmt: skip


def passes(result: dict[str, Any], limit_s: float) -> bool:
    p95 = result["speech_end_to_audio_p95"]
    return not result["errors"] and result["answers"] > 0 and p95 == p95 and p95 <= limit_s


def ladder(target: Target, rungs: tuple[int, ...], said: list[Spoken], args: argparse.Namespace,
           title: str) -> dict[str, Any]:  # fmt: skip
    """The ladder on one server, up to the first step past the limit; its figures."""
    rng = random.Random(SEED)
    began = time.perf_counter()
    calibration = calibrate(target, warm_up(target, said))
    bare, read = calibration["health_server_cpu_ms"], calibration["interview_read_server_cpu_ms"]
    console.print(f"{title}: warmed up in {time.perf_counter() - began:.0f} s; the server's CPU for a request: "
                  f"{bare:.2f} ms bare (/v1/health), {read:.2f} ms signed in, reading the interview")  # fmt: skip
    table = Table("N", "answers", "errors", "speech end → question audio p50", "p95", "speech end → turn end p50",
                  "p95", "turn end → text p95", "→ audio p95", "cut-offs", "no end", "frame wait p95",
                  "server CPU ms/frame", "db ms/frame", "server CPU %", "machine CPU %", "load 1m",
                  title=title)  # fmt: skip
    steps, within = [], 0
    for n in rungs:
        time.sleep(SETTLE_S)
        result = step(target, n, said, args.answers, args.listen_s, rng)
        steps.append(result)
        core = 100 * result["server_cpu_s"] / result["wall_s"]
        table.add_row(str(n), str(result["answers"]), str(result["errors"]),
                      *(f"{result[k]:.2f}" for k in ("speech_end_to_audio_p50", "speech_end_to_audio_p95",
                                                     "speech_end_to_eot_p50", "speech_end_to_eot_p95",
                                                     "eot_to_text_p95", "eot_to_audio_p95")),
                      f"{result['cut_off_rate']:.0%}", str(result["no_end_heard"]),
                      f"{result['frame_wait_max_p95']:.2f}", f"{result['server_cpu_ms_per_frame']:.1f}",
                      f"{result['database_cpu_ms_per_frame']:.1f}", f"{core:.0f}",
                      f"{result['machine_cpu_percent']:.0f}", f"{result['load_average_1m']:.2f}")  # fmt: skip
        if not passes(result, args.limit_s):
            break
        within = n
    console.print(table)
    for result in steps:
        for example in result["error_examples"]:
            console.print(f"[red]N={result['participants']}: {example}")
    return {"ladder": list(rungs), "within": within, "calibration": calibration, "steps": steps}


@contextmanager
def serve(database: Any, root: Path, name: str, env: dict[str, str]) -> Iterator[Target]:
    """The API server on ``database`` with ``env``, for the length of the block."""
    from tests.support.servers import ServerProcess

    server = ServerProcess(database_url=database.url, data_dir=root / f"{name}-data", log_path=root / f"{name}.log",
                           env_overrides=env)  # fmt: skip
    server.start(timeout_s=300)
    try:
        assert server.process is not None
        yield Target(server.url, database.url, server.process.pid, database.postmaster_pid)
    except BaseException:
        console.print(server.log()[-3000:])
        raise
    finally:
        server.stop()


# Not limits on a person: the API's per-caller limit counts every participant on the loopback as one caller.
COMMON_ENV = {"AGENTBANK_RATE_LIMIT_PER_MINUTE": "1000000", "AGENTBANK_EMBEDDED_THREADS": str(os.cpu_count() or 2)}


def run_remote(rungs: tuple[int, ...], said: list[Spoken], args: argparse.Namespace) -> dict[str, Any]:
    chat_port, speech_port = free_port(), free_port()
    chat = latency_server.start(chat_port, args.latency, None)
    speech = speech_server.start(speech_port, args.latency)
    env = {**COMMON_ENV, "AGENTBANK_CHAT_PROVIDER": "openai", "AGENTBANK_CHAT_MODEL": "fixed-latency",
           "AGENTBANK_CHAT_BASE_URL": f"http://127.0.0.1:{chat_port}/v1",
           "AGENTBANK_TRANSCRIBER": "openai", "AGENTBANK_STT_BASE_URL": f"http://127.0.0.1:{speech_port}/v1",
           "AGENTBANK_SPEAKER": "openai", "AGENTBANK_TTS_BASE_URL": f"http://127.0.0.1:{speech_port}/v1"}  # fmt: skip
    try:
        with embedded_database() as (database, root), serve(database, root, "remote", env) as target:
            figures = ladder(target, rungs, said, args, f"remote fakes ({args.latency:g} s a call)")
        figures["speech_server"], figures["chat_server"] = (
            speech_server.stats(speech_port),
            latency_server.stats(chat_port),
        )
        return figures
    finally:
        for process in (chat, speech):
            process.terminate()
            process.wait(10)


def run_embedded(rungs: tuple[int, ...], said: list[Spoken], args: argparse.Namespace) -> dict[str, Any]:
    with embedded_database() as (database, root), serve(database, root, "embedded", COMMON_ENV) as target:
        return ladder(target, rungs, said, args, "embedded models")


def rungs_of(text: str | None, default: tuple[int, ...]) -> tuple[int, ...]:
    return default if text is None else tuple(int(n) for n in text.split(","))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short ladder of 2 answers each, about five minutes")
    parser.add_argument("--embedded", action="store_true", help="the embedded models alone")
    parser.add_argument("--remote", action="store_true", help="the remote fakes alone")
    parser.add_argument("--answers", type=int, default=None, help="answers per participant at each step")
    parser.add_argument("--remote-ladder", default=None, help="comma-separated participant counts, remote fakes")
    parser.add_argument("--embedded-ladder", default=None, help="comma-separated participant counts, embedded")
    parser.add_argument("--latency", type=float, default=LATENCY_S, help="seconds each remote fake's call takes")
    parser.add_argument("--listen-s", type=float, default=None, help="the longest a question is listened to")
    parser.add_argument("--limit-s", type=float, default=LIMIT_S, help="p95 of end of speech to first audio")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the figures are saved")
    args = parser.parse_args()
    custom = any(x is not None for x in (args.answers, args.remote_ladder, args.embedded_ladder, args.listen_s))
    args.answers = args.answers or (QUICK_ANSWERS if args.quick else ANSWERS)
    args.listen_s = args.listen_s if args.listen_s is not None else (QUICK_LISTEN_S if args.quick else LISTEN_S)
    remote = rungs_of(args.remote_ladder, QUICK_REMOTE if args.quick else REMOTE_LADDER)
    embedded = rungs_of(args.embedded_ladder, QUICK_EMBEDDED if args.quick else EMBEDDED_LADDER)
    both = args.embedded == args.remote
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    began = time.perf_counter()
    said = answers(args.quick)
    console.print(f"{len(said)} answers spoken in {time.perf_counter() - began:.0f} s: " + ", ".join(
        f"{s.name} ({s.last_word_s:.1f} s, pause {s.pause_s:.1f} s)" for s in said))  # fmt: skip
    figures: dict[str, Any] = {
        "answers_per_participant": args.answers, "listen_s": args.listen_s, "limit_s": args.limit_s,
        "remote_latency_s": args.latency, "stop": "at the first step past the limit or with an error",
        "spoken": [{"name": s.name, "last_word_s": round(s.last_word_s, 2), "pause_s": round(s.pause_s, 2),
                    "frames": len(s.frames)} for s in said],
        "load_average_at_start_1_5_15_min": load_at_start,
    }  # fmt: skip
    lines: list[str] = []
    if both or args.remote:
        figures["remote"] = run_remote(remote, said, args)
        lines.append(f"interviews at once: {figures['remote']['within']} within p95 {args.limit_s:g} s (remote fakes)")
    if both or args.embedded:
        figures["embedded"] = run_embedded(embedded, said, args)
        lines.insert(0, f"interviews at once: {figures['embedded']['within']} within p95 {args.limit_s:g} s (embedded)")
    figures["total_s"] = round(time.perf_counter() - began, 1)
    if custom or not both:
        console.print("not saved: a ladder of its own")
    else:
        console.print(f"saved to {save('interviews-quick' if args.quick else 'interviews', figures, args.results)}")
    console.print(f"load average (1 min): {load_at_start[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, "
                  f"on {os.cpu_count()} CPUs")  # fmt: skip
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
