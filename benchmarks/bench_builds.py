"""Builds shared by several build processes: the WPA life histories built by ``agentbank build`` twice at
once against a local endpoint of fixed latency (``benchmarks.latency_server``), with the local embedder.

Reports the wall time against the ideal (the endpoint's calls x its latency / the calls in flight of all the
build processes together), the most calls the endpoint saw at once, each process's peak resident memory and
how many agents it built, and whether anybody was built twice (every participant must end with exactly one
agent, version 1). A build claims its participant with an advisory lock held outside any transaction, so
the model calls of one build never hold a transaction open and the other process moves on to the next one;
each process builds as many agents at once as it has calls in flight, within that limit.

Run: python -m benchmarks.bench_builds [--histories N] [--builders B] [--calls-in-flight C] [--quick]
(quick: 60 histories, ending with the line `builds: ratio to ideal X`)
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from rich.console import Console
from rich.table import Table
from sqlalchemy import func, select

from agentbank.building.ingest import read_interviews
from agentbank.building.transcripts import store_interviews
from agentbank.core.settings import Settings
from agentbank.db import transaction
from agentbank.db.embedded import stop_embedded_server
from agentbank.db.models import Agent, Participant
from app.opening import open_bank
from benchmarks import latency_server
from benchmarks.bench_throughput import SECRET, worker_env
from benchmarks.common import free_port, rss, save

LIFE_HISTORIES = Path("../shared/data/transcripts/fwp_life_histories")
console = Console()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--histories", type=int, default=None, help="how many life histories (default: all)")
    parser.add_argument("--builders", type=int, default=2, help="build processes at once")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds each model call takes")
    parser.add_argument("--calls-in-flight", type=int, default=8, help="model calls in flight per process")
    parser.add_argument("--embedder", default="local", help="local (real, on the CPU) or fake (no cost)")
    parser.add_argument("--quick", action="store_true", help="60 histories")
    args = parser.parse_args()
    if args.quick:
        args.histories = 60
    data_dir = Path(tempfile.mkdtemp(prefix="agentbank-builds-"))
    settings = Settings(data_dir=data_dir, secret_key=SecretStr(SECRET), chat_provider="fake",
                        embedder_provider="fake", reference_data_dir=Path("../shared/data"))  # fmt: skip
    port = free_port()
    server = latency_server.start(port, args.latency, None)
    try:
        with open_bank(settings, models=False) as bank:
            interviews, _ = read_interviews(LIFE_HISTORIES, limit=args.histories, skip_invalid=True)
            with transaction(bank.sessions) as session:
                store_interviews(session, interviews, bank.keys)
            env = {**worker_env(data_dir, port), "AGENTBANK_EMBEDDER_PROVIDER": args.embedder, "COLUMNS": "200",
                   "AGENTBANK_CHAT_CALLS_IN_FLIGHT": str(args.calls_in_flight)}  # fmt: skip
            logs = [data_dir / f"build-{n}.log" for n in range(args.builders)]
            began = time.perf_counter()
            procs = []
            for log in logs:
                with log.open("wb") as out:
                    procs.append(subprocess.Popen([sys.executable, "-c", "from app.cli import main; main()", "build"],
                                                  env=env, stdout=out, stderr=subprocess.STDOUT))  # fmt: skip
            peaks = [0] * len(procs)
            while any(p.poll() is None for p in procs):
                peaks = [max(peak, rss(p.pid)) for peak, p in zip(peaks, procs, strict=True)]
                time.sleep(0.5)
            wall = time.perf_counter() - began
            endpoint = latency_server.stats(port)
            with bank.sessions() as session:
                agents = session.scalar(select(func.count()).select_from(Agent)) or 0
                people = session.scalar(select(func.count()).select_from(Participant)) or 0
                newest = session.scalar(select(func.max(Agent.version))) or 0
        built = [_built(log.read_text()) for log in logs]
        codes = [p.returncode for p in procs]
    finally:
        server.terminate()
        server.wait(10)
        stop_embedded_server(settings.postgres_dir)
        shutil.rmtree(data_dir, ignore_errors=True)
    figures: dict[str, Any] = {
        "histories": people, "builders": args.builders, "latency_s": args.latency, "wall_s": round(wall, 1),
        "seconds_per_agent": round(wall / max(agents, 1), 2), "built_by_each": built, "exit_codes": codes,
        "peak_rss_mb_each": [round(p / 2**20) for p in peaks], "agents": agents,
        "nobody_built_twice": agents == people and newest == 1, "calls_in_flight_each": args.calls_in_flight,
        "embedder": args.embedder, "calls": endpoint["calls"], "peak_calls_at_once": endpoint["peak_in_flight"],
    }  # fmt: skip
    # The processes' start (imports, models) is not the builds' pace: the ratio is over the time from the
    # endpoint's first call to its last answer; the wall time with the start is kept beside it.
    ideal = endpoint["calls"] * args.latency / (args.calls_in_flight * args.builders)
    building = endpoint["last_answer_at"] - endpoint["first_call_at"]
    figures.update(ideal_s=round(ideal, 1), building_s=round(building, 1),
                   ratio_to_ideal=round(building / ideal, 2) if ideal else None)  # fmt: skip
    table = Table("histories", "builders", "calls", "at once", "wall s", "building s", "ideal s", "s / agent",
                  "built by each", "peak RSS MB each")  # fmt: skip
    table.add_row(str(people), str(args.builders), f"{endpoint['calls']:.0f}", f"{endpoint['peak_in_flight']:.0f}",
                  f"{wall:.0f}", f"{building:.1f}", f"{ideal:.1f}", f"{figures['seconds_per_agent']:.2f}",
                  " + ".join(map(str, built)), " / ".join(map(str, figures["peak_rss_mb_each"])))  # fmt: skip
    console.print(table)
    console.print(f"saved to {save('builds-quick' if args.quick else 'builds-in-flight', figures)}")
    console.print(f"nobody built twice: {'yes' if figures['nobody_built_twice'] else 'NO'}")
    console.print(f"builds: ratio to ideal {figures['ratio_to_ideal']}")


def _built(output: str) -> int:
    found = re.search(r"built (\d+) agent", output)
    return int(found.group(1)) if found else 0


if __name__ == "__main__":
    main()
