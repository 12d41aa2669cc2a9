"""Mixed load on the production topology of one machine, and a SIGKILL of one API process and one worker.

``deploy/host/topology.sh`` starts the distribution's PostgreSQL with pgvector, migrates as the owner and
serves as ``agentbank_app``: two API processes behind nginx and three workers, in production mode, with
JSON logs and the rate limit kept in the database. The workers' chat endpoint is ``benchmarks.latency_server``
(a fixed latency, 0.5 s); agents are built with the fake chat model and the hashing embedder (as in
bench_throughput), answer three GSS items through the workers for a release of the open tier, and a team's
project is approved for open questions; three participants get their portal access codes.

The load, through nginx for 5 minutes (``benchmarks.mixed_load``): open-tier distributions, job submissions
(an open question never asked before, so every job reaches the endpoint) followed to their results, and
portal reads. At 2 minutes one API process and one worker get SIGKILL and stay dead: nginx sends the
requests to the other API, and the other workers take the killed one's tasks once its heartbeat is stale.

At the end: no error but the requests in flight at the kill (counted apart), every acknowledged job done
with one result per agent and one answer per question, nothing written twice (results, their audit events),
an audit event for every read answered 2xx, and ``agentbank audit verify`` passing on the whole chain.

Quick mode also shortens the workers' heartbeat (2 s) and the silence after which others take a worker's
tasks (10 s), so the killed worker's tasks come back within the short run; the full run keeps the defaults.

Run after deploy/host/install.sh (as root; as another user, the cluster runs as that user):
    python -m benchmarks.bench_topology [--quick]   (quick: 60 s of load, the kill at 20 s, ≤ 3 min)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from sqlalchemy import text

from agentbank.core.settings import Settings
from agentbank.restricted.jobs.lifecycle import JOB_TASK
from app.opening import open_bank
from benchmarks import latency_server
from benchmarks.common import free_port, save
from benchmarks.mixed_load import KINDS, Load
from benchmarks.topology_bank import seed

ROOT = Path(__file__).resolve().parents[1]
TOPOLOGY = ROOT / "deploy" / "host" / "topology.sh"
console = Console()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=300, help="how long the load runs")
    parser.add_argument("--kill-at", type=float, default=120, help="seconds into the load of the SIGKILL")
    parser.add_argument("--agents", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds each model call takes")
    parser.add_argument("--quick", action="store_true", help="60 s of load, the kill at 20 s, 20 agents")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.kill_at, args.agents = 60, 20, 20
    state = Path(tempfile.mkdtemp(prefix="agentbank-topology-"))
    port, endpoint = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    server = latency_server.start(endpoint, args.latency, None)
    killed: dict[str, int] = {}
    phases: dict[str, float] = {}
    began = time.perf_counter()
    try:
        app_env, api_ports = _up(state, port, endpoint, args.quick)
        phases["up_s"] = time.perf_counter() - began
        console.print(f"topology up in {phases['up_s']:.0f} s: nginx on {base}, the API on {api_ports}")
        with open_bank(_settings(app_env)) as bank:
            plan = seed(bank, base, args.agents)
            phases["seed_s"] = time.perf_counter() - began - phases["up_s"]
            console.print(f"seeded {args.agents} agents, a release, a project and {len(plan.codes)} portal codes")
            load = Load(plan, args.seconds, args.kill_at, lambda: killed.update(_kill(state, api_ports[0])))
            asyncio.run(load.run(base, drain_s=150))
            phases["load_and_drain_s"] = time.perf_counter() - began - phases["up_s"] - phases["seed_s"]
            figures = _check(bank, load)
        figures["audit_verified"], figures["audit_verify"] = _verify(app_env)
    finally:
        subprocess.run([str(TOPOLOGY), "down", "--state-dir", str(state), "--purge"], check=False)
        server.terminate()
        server.wait(10)
    assert load.killed_at is not None and load.gone_at is not None
    phases["total_s"] = time.perf_counter() - began
    figures |= {"seconds": args.seconds, "kill_at_s": args.kill_at, "killed_pids": killed, "agents": args.agents,
                "kill_took_ms": round(1000 * (load.gone_at - load.killed_at), 1), "latency_s": args.latency,
                "phases": {k: round(v, 1) for k, v in phases.items()},
                "by_kind": {k: load.tallies[k].summary() for k in KINDS}}  # fmt: skip
    _report(figures, args)


def _up(state: Path, port: int, endpoint: int, quick: bool) -> tuple[dict[str, str], list[int]]:
    """Start the topology, its workers pointed at the local endpoint; the bank processes' settings, the API's ports."""
    env = {
        **os.environ,
        "AGENTBANK_CHAT_PROVIDER": "openai",
        "AGENTBANK_CHAT_BASE_URL": f"http://127.0.0.1:{endpoint}/v1",
        "AGENTBANK_CHAT_MODEL": "fixed-latency",
        "AGENTBANK_EMBEDDER_PROVIDER": "fake",
        # The load is one client of each kind: what is measured is the topology, not the per-client limit.
        "AGENTBANK_RATE_LIMIT_PER_MINUTE": "1000000",
    }
    if quick:  # the killed worker's tasks are taken over within the short run
        env |= {"AGENTBANK_WORKER_HEARTBEAT_S": "2", "AGENTBANK_WORKER_STALLED_AFTER_S": "10"}
    api_ports = [free_port(), free_port()]
    ports = ",".join(map(str, api_ports))
    agentbank = Path(sys.executable).parent / "agentbank"  # this environment's command
    command = [str(TOPOLOGY), "up", "--state-dir", str(state), "--port", str(port), "--api-ports", ports,
               "--workers", "3", "--pg-port", str(free_port()), "--agentbank", str(agentbank)]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode:  # the logs go with the state directory: their ends are shown first
        tails = [f"--- {log.name}\n" + "\n".join(log.read_text().splitlines()[-5:])
                 for log in sorted((state / "logs").glob("*.log"))]  # fmt: skip
        raise SystemExit(
            f"the topology did not start:\n{done.stdout[-2000:]}{done.stderr[-3000:]}\n" + "\n".join(tails)
        )
    lines = (state / "app.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line), api_ports


def _settings(app_env: dict[str, str]) -> Settings:
    """The topology's settings for this process, with the fake models that build the agents."""
    fields: dict[str, Any] = {key.removeprefix("AGENTBANK_").lower(): value for key, value in app_env.items()}
    return Settings(**fields, chat_provider="fake", embedder_provider="fake")


def _kill(state: Path, api_port: int) -> dict[str, int]:
    """SIGKILL the first API process and the first worker (the others go on); return once the API's port is
    closed, which is when nginx can no longer hand it a request."""
    pids = {name: int((state / "pids" / f"{name}.pid").read_text()) for name in ("api-1", "worker-1")}
    for pid in pids.values():
        os.kill(pid, signal.SIGKILL)
    sent = time.monotonic()
    while time.monotonic() < sent + 10:
        try:
            socket.create_connection(("127.0.0.1", api_port), timeout=1).close()
        except OSError:
            break
        time.sleep(0.005)
    console.print(f"SIGKILL sent to api-1 (pid {pids['api-1']}) and worker-1 (pid {pids['worker-1']}); "
                  f"the API's port closed {1000 * (time.monotonic() - sent):.0f} ms later")  # fmt: skip
    return pids


def _check(bank: Any, load: Load) -> dict[str, Any]:
    """Every acknowledged job done, each result and answer once, every 2xx portal read in the audit log (a
    published open-tier read writes none)."""
    lost, duplicated, withheld = [], [], 0
    for job, body in load.acknowledged.items():
        status, results = load.finished.get(job, ("unfinished", []))
        agents = [r["agent_id"] for r in results]
        if status != "done" or sorted(set(agents)) != sorted(body["agents"]):
            lost.append(f"{job}: {status}, {len(results)} result(s)")
        keys = [(r["agent_id"], a["key"]) for r in results for a in r["answers"]]
        if len(agents) != len(set(agents)) or len(keys) != len(set(keys)):
            duplicated.append(job)
        lost += [f"{job}: {r['agent_id']} has {len(r['answers'])} answers" for r in results
                 if len(r["answers"]) != len(body["questions"])]  # fmt: skip
        withheld += sum(r["status"] == "withheld" for r in results)
    with bank.sessions() as session:
        deadline = time.monotonic() + 60  # the surviving processes chain the last events within seconds
        unchained = text("SELECT count(*) FROM audit_events WHERE seq IS NULL")
        while session.scalar(unchained) and time.monotonic() < deadline:
            session.rollback()
            time.sleep(0.5)
        twice = session.scalar(text(
            "SELECT count(*) FROM (SELECT job_id, agent_id FROM job_results GROUP BY 1, 2 HAVING count(*) > 1) t"
        ))  # fmt: skip
        answered_twice = session.scalar(text(
            "SELECT count(*) FROM (SELECT details->>'job_id', agent_id FROM audit_events WHERE action = 'job.answer'"
            " GROUP BY 1, 2 HAVING count(*) > 1) t"
        ))  # fmt: skip
        jobs = {str(j) for j in session.scalars(text("SELECT id FROM jobs"))}
        # A task run once ends with one attempt; one taken back from a silent worker and run again, with two.
        tasks = text("SELECT count(*) FILTER (WHERE attempts > 1), count(*) FILTER (WHERE status <> 'succeeded') "
                     "FROM procrastinate_jobs WHERE task_name = :task")  # fmt: skip
        rerun, unfinished = session.execute(tasks, {"task": JOB_TASK}).one()
        events = dict(session.execute(text("SELECT action, count(*) FROM audit_events GROUP BY action")).all())
        logged = session.scalar(text("SELECT coalesce(sum(reads + not_modified), 0) FROM open_reads"))
    # A published read uses no agent and writes no audit event (each API process counts it in the access log,
    # in batches: a process killed between two loses its last counts); a portal read is audited.
    reads = {"portal": events.get("participant.view", 0) + events.get("participant.audit.read", 0)}
    unaudited = {kind: max(0, load.tallies[kind].ok - reads[kind]) for kind in reads}
    lost += [f"{n} {kind} read(s) answered 2xx without their audit event" for kind, n in unaudited.items() if n]
    lost += [f"{job}: acknowledged, not in the database" for job in set(load.acknowledged) - jobs]
    return {
        "jobs_acknowledged": len(load.acknowledged), "jobs_committed": len(jobs),
        "jobs_committed_never_acknowledged": len(jobs - set(load.acknowledged)),
        "submissions_given_up": len(load.unacknowledged), "results_withheld": withheld,
        "tasks_run_again": rerun, "tasks_unfinished": unfinished,
        "lost": len(lost) + len(load.unacknowledged) + unfinished, "lost_examples": lost[:10],
        "duplicated": len(duplicated) + (twice or 0) + (answered_twice or 0), "audit_events": sum(events.values()),
        "open_reads_audited": events.get("aggregate.read", 0), "open_reads_in_access_log": logged,
    }  # fmt: skip


def _verify(app_env: dict[str, str]) -> tuple[bool, str]:
    """``agentbank audit verify`` as an operator runs it, with the topology's settings."""
    command = [sys.executable, "-c", "from app.cli import main; main()", "audit", "verify"]
    done = subprocess.run(command, env={**os.environ, **app_env}, capture_output=True, text=True, timeout=600,
                          check=False)  # fmt: skip
    said = " ".join((done.stdout + done.stderr).split())
    return done.returncode == 0, said[said.find("verified") :] if done.returncode == 0 else said[-1000:]


def _report(figures: dict[str, Any], args: argparse.Namespace) -> None:
    table = Table("requests", "count", "ok", "errors", "cut by the kill", "retried", "per s", "p50 ms", "p95 ms")
    kinds = figures["by_kind"]
    for kind, t in kinds.items():
        counts = [str(t[name]) for name in ("requests", "ok", "errors", "cut_by_kill", "retried")]
        rate = f"{t['requests'] / args.seconds:.1f}"
        table.add_row(kind, *counts, rate, str(t["p50_ms"]), str(t["p95_ms"]))
    console.print(table)
    for kind, t in kinds.items():
        for error in t["first_errors"]:
            console.print(f"[red]{kind} error[/] {error}")
    for example in figures["lost_examples"]:
        console.print(f"[red]lost[/] {example}")
    console.print(
        f"jobs: {figures['jobs_acknowledged']} acknowledged, {figures['jobs_committed']} committed "
        f"({figures['jobs_committed_never_acknowledged']} never acknowledged), {figures['results_withheld']} "
        f"results withheld for review; {figures['tasks_run_again']} agents' tasks run again (the killed worker's), "
        f"{figures['tasks_unfinished']} unfinished; audit: {figures['audit_events']} events, {figures['audit_verify']}"
    )
    console.print("phases: " + ", ".join(f"{name} {seconds:.0f}" for name, seconds in figures["phases"].items()))
    if not args.quick:
        console.print(f"saved to {save('topology', figures)}")
    requests = sum(t["requests"] for t in kinds.values())
    errors = sum(t["errors"] for t in kinds.values())
    cut = sum(t["cut_by_kill"] for t in kinds.values())
    # The one-line summary stays the last line, whatever the checks found.
    print(
        f"mixed load: {requests} requests, {errors} errors, {cut} cut by the kill, lost {figures['lost']}, "
        f"duplicated {figures['duplicated']}, audit {'verified' if figures['audit_verified'] else 'NOT verified'}"
    )
    if errors or figures["lost"] or figures["duplicated"] or not figures["audit_verified"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
