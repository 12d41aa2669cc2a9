"""Throughput of population tasks against a remote endpoint: how close workers come to the ideal.

A local OpenAI-compatible endpoint answers every call after a fixed latency L with no limit of
concurrency (``benchmarks.latency_server``), and counts the calls it receives. N agents answer K GSS
items through the population queue with 1, 2 and 4 worker processes sharing C calls in flight (C /
workers each). A task answers all of one agent's items (one sealed row), with one call per item, so N
tasks make about N × K calls: the ideal wall time is calls × L ÷ C, the calls being those the endpoint
received; the figure is wall ÷ ideal. Beside it, wall ÷ (tasks × L ÷ C), the ideal as if a task were
one call, for comparison with figures read that way. Under ``--requests-per-minute R`` the endpoint
answers 429 beyond R calls a minute and the workers share a limit of R: the ideal is then the calls
answered ÷ R minutes, and the endpoint's count of 429s shows whether the shared limit held. Each run
first gives its workers one-item tasks (a worker loads its models with its first task that needs them),
so the timed run leaves their start out, as the CPU figure does.

Agents are built with the fake chat model and the hashing embedder (what is measured is the
answering); the workers' embedder is the hashing one too, so the figure is the pipeline's own:
planning, calls in flight, storing each answer, releasing with the audit event.

Run: python -m benchmarks.bench_throughput [--quick]   (quick: 100 agents × 10 items, 2 workers, ≤ 3 min)
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from pydantic import SecretStr
from rich.console import Console
from rich.table import Table
from sqlalchemy import func, select, text

from agentbank.audit import log as audit
from agentbank.building.agents import BuildConfig
from agentbank.building.build import build_agent
from agentbank.building.ingest import ParsedInterview, ParsedTurn
from agentbank.building.transcripts import store_interview
from agentbank.core.settings import Settings
from agentbank.db import transaction
from agentbank.db.embedded import stop_embedded_server
from agentbank.db.models import PopulationAnswer
from agentbank.db.queue import enqueue
from agentbank.instruments import load_instrument, select_items
from agentbank.publication.population import POPULATION_QUEUE, POPULATION_TASK, active_agent_ids, queue_population
from agentbank.runtime.bank import Bank
from app.opening import open_bank
from benchmarks import latency_server
from benchmarks.common import free_port, rss, save

SECRET = "benchmark-secret-that-is-long-enough-for-use"
ITEMS = (
    "cappun gunlaw grass abany natenvir natheal natcrime nateduc natrace natfare "
    "trust fair helpful happy polviews courts prayer fepresch letdie1 homosex"
).split()
console = Console()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--items", type=int, default=20, choices=range(1, len(ITEMS) + 1), metavar="1..20")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds each call takes")
    parser.add_argument("--in-flight", type=int, default=32, help="calls in flight, shared by the workers")
    parser.add_argument("--workers", default="1,2,4", help="comma-separated worker counts, one run each")
    parser.add_argument("--requests-per-minute", type=int, default=None, help="one more run under this limit")
    parser.add_argument("--quick", action="store_true", help="100 agents x 10 items with 2 workers")
    args = parser.parse_args()
    if args.quick:
        args.agents, args.items, args.workers = 100, 10, "2"
    counts = [int(w) for w in args.workers.split(",")]
    load_at_start = [round(x, 2) for x in os.getloadavg()]  # the saved machine facts hold the load at the end
    data_dir = Path(tempfile.mkdtemp(prefix="agentbank-throughput-"))
    settings = Settings(data_dir=data_dir, secret_key=SecretStr(SECRET), chat_provider="fake", embedder_provider="fake",
                        reference_data_dir=Path("../shared/data"))  # fmt: skip
    runs: list[dict[str, Any]] = []
    try:
        with open_bank(settings) as bank:
            _build(bank, args.agents)
            gss = load_instrument("gss", settings.reference_data_dir)
            items = select_items(gss, ITEMS[: args.items])
            plans: list[tuple[int, int | None]] = [(w, None) for w in counts]
            if args.requests_per_minute:
                plans.append((max(counts), args.requests_per_minute))
            for workers, limit in plans:
                # An endpoint of its own for each run: the limited run's counts and limit stay its own.
                port = free_port()
                server = latency_server.start(port, args.latency, limit)
                try:
                    run = _run(bank, worker_env(data_dir, port), gss, items, workers, args, limit, port)
                finally:
                    server.terminate()
                    server.wait(10)
                runs.append(run)
                console.print(
                    f"{workers} worker(s){f', limit {limit}/min' if limit else ''}: {run['tasks']} tasks, "
                    f"{run['calls']} calls, {run['wall_s']:.1f} s, ideal of the calls {run['ideal_s']:.1f} s, "
                    f"ratio {run['ratio']:.2f} (per task {run['ratio_per_task']:.2f})"
                )
    finally:
        stop_embedded_server(settings.postgres_dir)
        shutil.rmtree(data_dir, ignore_errors=True)
    _report(runs, args, load_at_start)


def _report(runs: list[dict[str, Any]], args: argparse.Namespace, load_at_start: list[float]) -> None:
    table = Table("workers", "limit /min", "tasks", "calls", "wall s", "ideal s (calls)", "ratio",
                  "ratio per task", "429s", "worker CPU ms/call", "peak RSS MB/worker")  # fmt: skip
    for run in runs:
        table.add_row(
            str(run["workers"]), str(run["limit"] or "-"), str(run["tasks"]), str(run["calls"]),
            f"{run['wall_s']:.1f}", f"{run['ideal_s']:.1f}", f"{run['ratio']:.2f}", f"{run['ratio_per_task']:.2f}",
            str(run["rate_limited"]), f"{run['cpu_ms_per_call']:.1f}", f"{run['peak_rss_mb']:.0f}",
        )  # fmt: skip
    console.print(table)
    figures = {"agents": args.agents, "items": args.items, "latency_s": args.latency, "in_flight": args.in_flight,
               "load_average_at_start_1_5_15_min": load_at_start, "runs": runs}  # fmt: skip
    console.print(f"saved to {save('throughput-quick' if args.quick else 'throughput', figures)}")
    console.print(f"ratio to ideal: {max(r['ratio'] for r in runs if not r['limit']):.2f}")


def _run(bank: Bank, env: dict[str, str], gss: Any, items: list[Any], workers: int, args: argparse.Namespace,
         limit: int | None, port: int) -> dict[str, Any]:  # fmt: skip
    """One run: ``workers`` processes, warmed up, then every agent's population task from fresh answers;
    wall time to the last."""
    _forget_answers(bank)  # an earlier run's
    with transaction(bank.sessions) as session:
        session.execute(text("DELETE FROM procrastinate_workers"))  # those of an earlier run
    per_worker = max(1, args.in_flight // workers)
    env = {**env, "AGENTBANK_CHAT_CALLS_IN_FLIGHT": str(per_worker)}
    if limit:
        env["AGENTBANK_CHAT_REQUESTS_PER_MINUTE"] = str(limit)
    logs = [Path(env["AGENTBANK_DATA_DIR"]) / f"worker-{workers}-{n}.log" for n in range(workers)]
    procs = [_start_worker(env, log) for log in logs]
    try:
        _wait_for_workers(bank, workers, procs, logs)
        _warm_up(bank, gss, items, workers * per_worker, procs)
        before = latency_server.stats(port)
        started_cpu = sum(_cpu_s(p.pid) for p in procs)  # the start's imports and model loads left out
        with transaction(bank.sessions) as session:
            queued = queue_population(session, gss, items, audit.SYSTEM)
        began = time.perf_counter()
        peak_rss = _wait_for_answers(bank, queued, procs)  # one task per agent: its sealed row is written whole
        wall = time.perf_counter() - began
        cpu = sum(_cpu_s(p.pid) for p in procs) - started_cpu
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(30)
    after = latency_server.stats(port)
    # The calls the endpoint received (a task makes one per item it has no stored answer for; a 429 and
    # its retry are two), and those it answered.
    calls = int(after["calls"] - before["calls"])
    answered = int(after["answered"] - before["answered"])
    if not calls:
        raise SystemExit("the endpoint received no calls: were the answers already stored?")
    in_flight = per_worker * workers
    ideal = calls * args.latency / in_flight
    if limit:
        ideal = max(ideal, answered / limit * 60)
    ideal_per_task = queued * args.latency / in_flight  # as if each task were one call
    return {
        "workers": workers, "limit": limit, "tasks": queued, "calls": calls, "answered": answered,
        "in_flight": in_flight, "wall_s": round(wall, 2), "ideal_s": round(ideal, 2),
        "ratio": round(wall / ideal, 3), "ideal_per_task_s": round(ideal_per_task, 2),
        "ratio_per_task": round(wall / ideal_per_task, 3),
        "rate_limited": after["rate_limited"] - before["rate_limited"],
        "peak_in_flight_at_endpoint": after["peak_in_flight"],
        "cpu_ms_per_call": round(1000 * cpu / calls, 2), "cpu_ms_per_task": round(1000 * cpu / queued, 2),
        "peak_rss_mb": round(peak_rss / 2**20, 1),
    }  # fmt: skip


def _warm_up(bank: Bank, gss: Any, items: list[Any], tasks: int, procs: list[subprocess.Popen[bytes]]) -> None:
    """A worker loads its models with its first task that needs them: ``tasks`` tasks of one item (as many
    as the calls in flight, so every worker takes some) leave that start out of the timed run, as its CPU
    is left out."""
    with transaction(bank.sessions) as session:
        agents = active_agent_ids(session)[:tasks]
        enqueue(session, POPULATION_QUEUE, POPULATION_TASK,
                [{"agent_id": str(a), "instrument": gss.key, "items": [items[0].key]} for a in agents])  # fmt: skip
    _wait_for_answers(bank, len(agents), procs)
    _forget_answers(bank)


def _forget_answers(bank: Bank) -> None:
    """Nothing stored answers from the cache, and no agent counts as answered."""
    with transaction(bank.sessions) as session:
        session.execute(text("DELETE FROM population_answers"))
        session.execute(text("DELETE FROM answers"))


def _build(bank: Bank, agents: int) -> None:
    chat, embedder = bank.require_models()
    config = BuildConfig.of(chat, embedder, bank.settings.reflection_word_budget)
    began = time.perf_counter()
    for n in range(agents):
        with transaction(bank.sessions) as session:
            participant = store_interview(session, _interview(n), bank.keys)
            build_agent(session, participant, chat=chat, embedder=embedder, keys=bank.keys, config=config)
        if (n + 1) % 100 == 0:
            console.print(f"built {n + 1} of {agents} agents ({time.perf_counter() - began:.0f} s)")


def _interview(n: int) -> ParsedInterview:
    """A short synthetic life history; what is measured does not depend on its words."""
    turns = []
    for t in range(6):
        turns.append(ParsedTurn("interviewer", f"Tell me about part {t} of your life."))
        turns.append(ParsedTurn("participant", f"Person {n} remembers part {t}: work, family and the town."))
    return ParsedInterview(f"benchmark:{n}", tuple(turns), {"sex": 1 + n % 2, "age": 20 + n % 60})


def worker_env(data_dir: Path, port: int) -> dict[str, str]:
    """A bank process's settings: this data directory, the local endpoint at ``port``, the hashing embedder."""
    return {
        **os.environ,
        "AGENTBANK_DATA_DIR": str(data_dir),
        "AGENTBANK_SECRET_KEY": SECRET,
        "AGENTBANK_CHAT_PROVIDER": "openai",
        "AGENTBANK_CHAT_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "AGENTBANK_CHAT_MODEL": "fixed-latency",
        "AGENTBANK_EMBEDDER_PROVIDER": "fake",
        "AGENTBANK_REFERENCE_DATA_DIR": str(Path("../shared/data").resolve()),
    }


def _start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:  # the child keeps its own copy of the file
        return subprocess.Popen([sys.executable, "-c", "from app.cli import main; main()", "worker"], env=env,
                                stdout=out, stderr=subprocess.STDOUT)  # fmt: skip


def _wait_for_workers(bank: Bank, workers: int, procs: list[subprocess.Popen[bytes]], logs: list[Path]) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        for proc, log in zip(procs, logs, strict=True):
            if proc.poll() is not None:
                raise SystemExit(f"a worker exited on start:\n{log.read_text()[-3000:]}")
        with bank.sessions() as session:
            ready = session.scalar(text("SELECT count(*) FROM procrastinate_workers"))
        if ready is not None and ready >= workers:
            return
        time.sleep(0.2)
    raise SystemExit("the workers did not start in 3 minutes")


def _wait_for_answers(bank: Bank, expected: int, procs: list[subprocess.Popen[bytes]]) -> int:
    """Poll until every answer is in; returns the largest resident memory of one worker seen."""
    peak = 0
    while True:
        with bank.sessions() as session:
            done = session.scalar(select(func.count()).select_from(PopulationAnswer)) or 0  # agents answered
            failed = session.scalar(text("SELECT count(*) FROM procrastinate_jobs WHERE status = 'failed'")) or 0
        peak = max([peak, *(rss(p.pid) for p in procs)])
        if done >= expected:
            return peak
        if failed:
            raise SystemExit(f"{failed} population task(s) failed")
        time.sleep(0.25)


def _cpu_s(pid: int) -> float:
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return times.user + times.system


if __name__ == "__main__":
    main()
