"""How a release cut grows: its time and peak memory at 1,000, 10,000 and 100,000 agents × 173 GSS items.

Each size runs in a process of its own (so its peak memory is its own), on a fresh embedded database:
the agents are stored as the bank stores them (each with its own data key, demographics and answers
sealed), then one release is cut as a worker cuts it. Peak memory is sampled every 50 ms during the cut,
over the process's memory just before it. The growth exponent is fitted on the log-log points (1 is
linear).

Run: python -m benchmarks.bench_release_scale [--sizes 1000,10000,100000] [--quick]
Quick (a few minutes): 1,000 and 10,000 agents, one line: ``release cut: exponent X (N agents in S s)``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psutil
from sqlalchemy import create_engine, insert
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.db.models import Agent, Participant, PopulationAnswer, Transcript
from agentbank.instruments.gss import load_gss, survey_items
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import FileKeyStore
from agentbank.publication.privacy import Budget
from agentbank.publication.releases import Policy, cut_release
from benchmarks.bench_release_privacy import answers, person
from benchmarks.common import save
from migrations.runner import alembic_config, upgrade

SECRET = "benchmark-secret-" * 3
ITEMS = 173
BATCH = 2000


def store(url: str, keys: KeyRing, agents: int) -> float:
    """``agents`` agents stored sealed, in batches; returns the seconds it took."""
    rng = random.Random(7)
    items = survey_items(load_gss())[:ITEMS]
    engine = create_engine(url)
    began = time.perf_counter()
    for start in range(0, agents, BATCH):
        participants, transcripts, agent_rows, answer_rows = [], [], [], []
        for _ in range(min(BATCH, agents - start)):
            pid, tid, aid = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
            wrapped, cipher = keys.new_key(pid)
            demographics = person(rng)
            participants.append({"id": pid, "pseudonym": f"P-{pid.hex[:12]}", "source_ref": f"bench:{pid}",
                                 "consent": "consented", "wrapped_key": wrapped,
                                 "demographics_encrypted": cipher.seal_json(demographics)})  # fmt: skip
            transcripts.append({"id": tid, "participant_id": pid, "version": 1, "status": "final"})
            agent_rows.append({"id": aid, "participant_id": pid, "version": 1, "transcript_id": tid,
                               "status": "active", "build": {}})  # fmt: skip
            given = answers(rng, demographics, items)
            answer_rows.append({"agent_id": aid, "instrument": "gss", "answers_encrypted": cipher.seal_json(
                {k: [v, float(v)] for k, v in given.items()})})  # fmt: skip
        with Session(engine) as session, session.begin():
            for model, rows in ((Participant, participants), (Transcript, transcripts), (Agent, agent_rows),
                                (PopulationAnswer, answer_rows)):  # fmt: skip
                session.execute(insert(model), rows)
    engine.dispose()
    return time.perf_counter() - began


def one_size(agents: int) -> dict[str, float]:
    """Store ``agents`` agents and cut a release, in this process; the cut's seconds and peak memory."""
    root = Path(tempfile.mkdtemp(prefix="agentbank-scale-"))
    server = start_embedded_server(root / "postgres")
    try:
        upgrade(alembic_config(server.url))
        keys = KeyRing(SECRET, FileKeyStore(root / "keyring.json", SECRET))
        stored_s = store(server.url, keys, agents)
        gss = load_gss()
        process = psutil.Process()
        baseline = process.memory_info().rss
        peak, running = [baseline], [True]

        def sample() -> None:
            while running[0]:
                peak[0] = max(peak[0], process.memory_info().rss)
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        engine = create_engine(server.url)
        began = time.perf_counter()
        with Session(engine) as session, session.begin():
            outcome = cut_release(session, keys, lambda _: gss, Policy(10, Budget()), audit.SYSTEM)
        cut_s = time.perf_counter() - began
        running[0] = False
        sampler.join()
        assert outcome.release is not None, outcome.reason
        engine.dispose()
    finally:
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)
    return {"agents": agents, "store_seconds": stored_s, "cut_seconds": cut_s,
            "cut_peak_mib": (peak[0] - baseline) / 2**20}  # fmt: skip


def exponent(points: list[dict[str, float]], key: str) -> float | None:
    """The slope of log(key) on log(agents): 1 is linear growth."""
    xs = [math.log(p["agents"]) for p in points]
    ys = [math.log(max(p[key], 1e-9)) for p in points]
    if len(xs) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a size, in a process of its own
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_size(args.one)))
        return
    sizes = [1000, 10000] if args.quick else [int(s) for s in args.sizes.split(",")]
    points = []
    for size in sizes:
        run = subprocess.run([sys.executable, "-m", "benchmarks.bench_release_scale", "--one", str(size)],
                             capture_output=True, text=True, check=True)  # fmt: skip
        points.append(json.loads(run.stdout.strip().splitlines()[-1]))
        print(points[-1], flush=True)
    figures = {"items": ITEMS, "points": points, "cut_seconds_exponent": exponent(points, "cut_seconds"),
               "cut_peak_mib_exponent": exponent(points, "cut_peak_mib")}  # fmt: skip
    if not args.quick:
        print(f"saved to {save('release-scale', figures)}")
    last = points[-1]
    print(f"release cut: exponent {figures['cut_seconds_exponent']:.2f} "
          f"({last['agents']} agents in {last['cut_seconds']:.1f} s, {last['cut_peak_mib']:.0f} MiB)")  # fmt: skip


if __name__ == "__main__":
    main()
