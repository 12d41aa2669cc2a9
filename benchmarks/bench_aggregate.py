"""The open tier under load: 1,000 agents × 173 GSS items of precomputed answers.

Measures the cost of cutting and publishing a release (every table of its workload, each protected with
the release's noise, from answers sealed with each participant's key, the tables the plan reads asked for
first; then every table written as files), then the distribution endpoint on loopback (p50/p99 latency,
requests/s) against the same SQL run directly: cold and warm, then warm again from 1, 16 and 64 clients at
once, each client reading plainly and then repeating its reads as a browser or a proxy does, with the ETag
it was given (`If-None-Match`: a 304 with no body). Every request is authorized; none is audited (a
published read uses no agent). The same reads at 16 connections from `wrk` (a load generator in C, which
costs far less than Python clients; its own CPU is reported beside the server's), when it is installed.
Then the CPU the API process spends per request, for a published read (and what the clients spend on it)
and for the cheapest authenticated route.
Last, the explorer page in headless Chromium: sign-in to the item list, and the time from "Show table" to
the chart drawn.

With ``--nginx`` (and nginx installed), the same wrk reads through nginx configured as the host topology
configures it (``deploy/host/topology.sh``'s own ``start_nginx``): the shelf served as files, the token
asked of the API and kept 30 s.

Run: python -m benchmarks.bench_aggregate [--quick] [--api-workers N] [--nginx]
(quick: 200 agents x 40 items, no browser, a few minutes; its last line reads
`repeated read: N requests/s, p99 M ms at 16 clients`; ``--api-workers 2``: two API processes on the port,
as uvicorn's workers, the results file named for them)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
from rich.console import Console
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from agentbank.access.clients import create_client
from agentbank.audit import log as audit
from agentbank.audit.signing_keys import load_signer
from agentbank.core.settings import Settings
from agentbank.db.connections import make_sessionmaker
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.instruments import load_instrument
from agentbank.instruments.gss import load_gss, survey_items
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import FileKeyStore
from agentbank.publication.breakdowns import BREAKDOWNS
from agentbank.publication.distributions import DIMENSIONS
from agentbank.publication.releases import Policy, cut_release
from agentbank.publication.shelf import Shelf, ensure_published
from agentbank.publication.workload import ask
from benchmarks.bench_release_privacy import populate as sealed_bank
from benchmarks.common import free_port, save
from migrations.runner import alembic_config, upgrade

AGENTS, ITEMS, REQUESTS = 1000, 173, 400
CLIENTS = (1, 16, 64)  # concurrent clients of the warm phase
SECRET = "benchmark-secret-" * 3
SERVER = (
    "import uvicorn; uvicorn.run('benchmarks.bench_aggregate:served_app', factory=True, host='127.0.0.1', "
    "port={port}, workers={workers}, log_level='warning')"
)
BREAKDOWN_CHOICES = ["", "sex", "race", "sex,race", "party", "ideology,sex", "marital", "health,sex"]
CHARTS = 20  # tables the explorer draws, each a first look at its item
CHROMIUM = Path("/usr/bin/chromium")
WRK = shutil.which("wrk")
WRK_SECONDS = 10
# wrk's script: the plan's paths in turn, each with the token (and its ETag for repeated reads); at the end one
# line of JSON with what wrk counted.
WRK_SCRIPT = """
local paths, tags, token = {paths}, {tags}, "{token}"
local i = 0
request = function()
  i = i % #paths + 1
  local headers = {{["Authorization"] = "Bearer " .. token}}
  if tags[i] ~= "" then headers["If-None-Match"] = tags[i] end
  return wrk.format("GET", paths[i], headers)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('JSON {{"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, '
    .. '"errors": %d, "bad_status": %d}}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
"""


def served_app() -> Any:
    """The API as each server process makes it from its environment (``--api-workers`` starts several)."""
    from agentbank.core.settings import Settings
    from app.api import create_app

    return create_app(Settings())


def populate(url: str, keys: KeyRing) -> tuple[list[str], tuple[str, str]]:
    """The bank of ``bench_release_privacy``: sealed demographics and answers, one key per participant."""
    items = survey_items(load_gss())[:ITEMS]
    engine = create_engine(url)
    with Session(engine) as session, session.begin():
        sealed_bank(session, keys, AGENTS, items)
        created = create_client(session, "bench", ["aggregate:read"], audit.Actor("operator", "bench"))
        credentials = (created.client.client_id, created.secret)
    engine.dispose()
    return [item.key for item in items], credentials


def wrk_reads(base: str, token: str, plan: list[tuple[str, str]], tags: list[str], api_pid: int,
              connections: int = 16) -> dict[str, float]:  # fmt: skip
    """``plan`` read by wrk at ``connections`` connections for ``WRK_SECONDS`` (with ``tags``: each its ETag,
    so a 304): requests/s, p50 and p99 ms, and the CPU seconds wrk and the API process spent per request."""
    lua = lambda values: "{" + ",".join(json.dumps(v) for v in values) + "}"  # noqa: E731
    paths = [f"/v1/open/instruments/gss/items/{item}/distribution?breakdowns={b}" for item, b in plan]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT.format(paths=lua(paths), tags=lua(tags), token=token))
    api = psutil.Process(api_pid)
    api_before, wrk_before = sum(api.cpu_times()[:2]), _children_cpu_s()
    assert WRK is not None
    run = subprocess.run([WRK, "-t1", f"-c{connections}", f"-d{WRK_SECONDS}s", "-s", script.name, base],
                         capture_output=True, text=True, check=True)  # fmt: skip
    api_s, wrk_s = sum(api.cpu_times()[:2]) - api_before, _children_cpu_s() - wrk_before  # wrk has exited
    os.unlink(script.name)
    counted = json.loads(next(line for line in run.stdout.splitlines() if line.startswith("JSON "))[5:])
    assert counted["errors"] == 0 and counted["bad_status"] == 0, run.stdout
    n = counted["requests"]
    return {"rps": n / (counted["duration_us"] / 1e6), "p50_ms": counted["p50_us"] / 1000,
            "p99_ms": counted["p99_us"] / 1000, "requests": n, "api_cpu_ms_per_request": api_s * 1000 / n,
            "wrk_cpu_ms_per_request": wrk_s * 1000 / n}  # fmt: skip


def start_nginx(root: Path, api_port: int) -> str:
    """nginx in front of the API on ``api_port``, configured by the host topology's own function; its URL."""
    port = free_port()
    function = subprocess.run(["sed", "-n", "/^start_nginx() {/,/^up() {/p", "deploy/host/topology.sh"],
                              capture_output=True, text=True, check=True).stdout.rsplit("up() {", 1)[0]  # fmt: skip
    (root / "nginx").mkdir(exist_ok=True)
    variables = {"STATE": root, "PIDS": root, "LOGS": root, "NGINX": root / "nginx", "RELEASES": root / "releases",
                 "DATA": root / "data", "PORT": port, "API_PORTS": api_port}  # fmt: skip
    script = "".join(f"{k}={v}\n" for k, v in variables.items()) + function + "\nstart_nginx\n"
    subprocess.run(["bash", "-c", script], check=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{base}/v1/health", timeout=1)
            return base
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit("nginx did not start")


def app_reads(url: str) -> int:
    """Reads the API has counted in its access log, once its counts of the last 10 s are flushed."""
    time.sleep(11)
    engine = create_engine(url)
    with engine.connect() as conn:
        total = conn.execute(text("SELECT coalesce(sum(reads + not_modified), 0) FROM open_reads")).scalar_one()
    engine.dispose()
    return int(total)


def nginx_served(log: Path, by_app: int) -> dict[str, float]:
    """The reads through nginx (its JSON access log), the share it answered from the shelf itself (those the API
    did not count as its own), and the share whose client its log names (from the token check it kept)."""
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    reads = [r for r in rows if "/distribution" in r["request"]]
    n = max(len(reads), 1)
    return {"reads": len(reads), "answered_by_the_api": by_app, "served_from_files_share": 1 - by_app / n,
            "with_a_reader_share": sum(bool(r["reader"]) for r in reads) / n}  # fmt: skip


def stop_nginx(root: Path) -> None:
    pid = root / "nginx.pid"
    if pid.is_file():
        subprocess.run(["kill", pid.read_text().strip()], check=False)


def _children_cpu_s() -> float:
    """CPU seconds of this process's children that have exited (wrk's, once it has)."""
    times = os.times()
    return times.children_user + times.children_system


def _concurrent(
    base: str, headers: dict[str, str], plan: list[tuple[str, str]], clients: int, conditional: bool
) -> dict[str, float]:  # fmt: skip
    """Warm requests from ``clients`` clients at once, each audited: requests per second, p50 and p99 ms.
    ``conditional``: each client first reads its tables once (not timed), then repeats them with the ETag."""
    latencies: list[float] = []
    lock = threading.Lock()

    def one_client(requests: list[tuple[str, str]], ready: threading.Barrier) -> None:
        with httpx.Client(base_url=base, timeout=60) as client:
            tags: dict[tuple[str, str], str] = {}
            if conditional:
                for item, breakdowns in requests:
                    r = client.get(f"/v1/open/instruments/gss/items/{item}/distribution",
                                   params={"breakdowns": breakdowns}, headers=headers)  # fmt: skip
                    tags[(item, breakdowns)] = r.headers["etag"]
            ready.wait()
            mine = []
            for item, breakdowns in requests:
                sent = {**headers, "If-None-Match": tags[(item, breakdowns)]} if conditional else headers
                t = time.perf_counter()
                r = client.get(f"/v1/open/instruments/gss/items/{item}/distribution",
                               params={"breakdowns": breakdowns}, headers=sent)  # fmt: skip
                mine.append((time.perf_counter() - t) * 1000)
                assert r.status_code == (304 if conditional else 200), r.text
            with lock:
                latencies.extend(mine)

    shares = [plan[n::clients] for n in range(clients)]
    ready = threading.Barrier(clients + 1)
    threads = [threading.Thread(target=one_client, args=(share, ready)) for share in shares]
    for thread in threads:
        thread.start()
    ready.wait()  # every client has its tags: only the repeated reads are timed
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    rps = len(plan) / (time.perf_counter() - began)
    return {"rps": rps, "p50_ms": statistics.median(latencies), "p99_ms": percentile(latencies, 99)}


def cpu_ms(base: str, headers: dict[str, str], pid: int, path: str, requests: int = 400) -> tuple[float, float]:
    """CPU the API process spends per request of ``path`` (4 clients at once), what bounds one process's
    requests per second whatever the clients do; and the CPU the clients (this process) spend on it, which
    shares the same cores."""
    process, me = psutil.Process(pid), psutil.Process()

    def client(n: int) -> None:
        with httpx.Client(base_url=base, timeout=60) as http:
            for _ in range(n):
                assert http.get(path, headers=headers).status_code == 200

    before, mine = sum(process.cpu_times()[:2]), sum(me.cpu_times()[:2])
    threads = [threading.Thread(target=client, args=(requests // 4,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done = requests // 4 * 4
    return (sum(process.cpu_times()[:2]) - before) * 1000 / done, (sum(me.cpu_times()[:2]) - mine) * 1000 / done


SERVER_START_S = 120  # its imports alone take over 10 s on a busy two-core machine


def wait_until_serving(client: httpx.Client, api: subprocess.Popen[bytes]) -> None:
    """Until the server answers; an error if it ended or never answered (not a refused request later)."""
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline and api.poll() is None:
        try:
            client.get("/v1/health")
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"the API server did not answer within {SERVER_START_S} s (exit status {api.poll()})")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    global AGENTS, ITEMS, REQUESTS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="200 agents x 40 items, no browser")
    parser.add_argument("--api-workers", type=int, default=1, help="API server processes on one port (uvicorn's)")
    parser.add_argument("--nginx", action="store_true", help="the wrk reads through nginx too, as the host topology")
    args = parser.parse_args()
    quick, workers = args.quick, args.api_workers
    if quick:
        AGENTS, ITEMS, REQUESTS = 200, 40, 640
    console = Console()
    root = Path(tempfile.mkdtemp(prefix="agentbank-bench-"))
    server = start_embedded_server(root / "postgres")
    port = free_port()
    try:
        upgrade(alembic_config(server.url))
        keys = KeyRing(SECRET, FileKeyStore(root / "keyring.json", SECRET))
        with console.status(f"loading {AGENTS} agents × {ITEMS} items..."):
            began = time.perf_counter()
            items, credentials = populate(server.url, keys)
            load_s = time.perf_counter() - began
        # The shelf apart from the data directory, where a file server may read it (as the host topology keeps it).
        root.chmod(0o755)
        settings = Settings(secret_key=SECRET, data_dir=root / "data", release_files_dir=root / "releases")
        with console.status("cutting and publishing a release..."):
            cut_s, publish_s = cut(settings, server.url, keys, items)
        env = {**os.environ, "AGENTBANK_DATABASE_URL": server.url, "AGENTBANK_SECRET_KEY": SECRET,
               "AGENTBANK_DATA_DIR": str(root / "data"), "AGENTBANK_RELEASE_FILES_DIR": str(root / "releases"),
               "AGENTBANK_RATE_LIMIT_PER_MINUTE": "1000000"}  # fmt: skip
        api = subprocess.Popen([sys.executable, "-c", SERVER.format(port=port, workers=workers)], env=env)
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=30) as client:
            wait_until_serving(client, api)
            issued = client.post("/oauth/token", data={"grant_type": "client_credentials"},
                                 auth=credentials)  # fmt: skip
            assert issued.status_code == 200, issued.text
            token = issued.json()["access_token"]
            headers = {"Authorization": f"Bearer {token}"}
            rng = random.Random(1)
            plan = [(rng.choice(items), rng.choice(BREAKDOWN_CHOICES)) for _ in range(REQUESTS)]

            def run(requests: list[tuple[str, str]]) -> tuple[list[float], float, int]:
                latencies, began, preparing = [], time.perf_counter(), 0
                for item, breakdowns in requests:
                    t = time.perf_counter()
                    r = client.get(f"/v1/open/instruments/gss/items/{item}/distribution",
                                   params={"breakdowns": breakdowns}, headers=headers)  # fmt: skip
                    latencies.append((time.perf_counter() - t) * 1000)
                    assert r.status_code in (200, 202), r.text
                    preparing += r.status_code == 202
                return latencies, len(requests) / (time.perf_counter() - began), preparing

            cold, cold_rps, cold_preparing = run(plan)
            warm, warm_rps, warm_preparing = run(plan)
            assert cold_preparing == warm_preparing == 0  # every table read was asked for before the cut
            concurrent = {
                (clients, conditional): _concurrent(base, headers, plan, clients, conditional)
                for clients in CLIENTS
                for conditional in (False, True)
            }
            by_wrk = {}
            if WRK is not None and workers == 1:
                tags = [client.get(f"/v1/open/instruments/gss/items/{item}/distribution", params={"breakdowns": b},
                                   headers=headers).headers["etag"] for item, b in plan]  # fmt: skip
                by_wrk = {"plain": wrk_reads(base, token, plan, [""] * len(plan), api.pid),
                          "repeated": wrk_reads(base, token, plan, tags, api.pid)}  # fmt: skip
                if args.nginx and shutil.which("nginx"):
                    front = start_nginx(root, port)
                    app_before = app_reads(server.url)
                    try:
                        # nginx's own validators (its ETag of the file), as a client of nginx is given them
                        tags = [client.get(f"{front}/v1/open/instruments/gss/items/{item}/distribution",
                                           params={"breakdowns": b}, headers=headers).headers["etag"]
                                for item, b in plan]  # fmt: skip
                        by_wrk["nginx_plain"] = wrk_reads(front, token, plan, [""] * len(plan), api.pid)
                        by_wrk["nginx_repeated"] = wrk_reads(front, token, plan, tags, api.pid)
                    finally:
                        stop_nginx(root)
                    by_wrk["nginx_log"] = nginx_served(root / "nginx-access.log", app_reads(server.url) - app_before)
            # One process's CPU per request, for a kept read and for the cheapest authenticated route.
            kept = f"/v1/open/instruments/gss/items/{items[0]}/distribution"
            # (With several processes the pid is uvicorn's supervisor, which serves nothing.)
            cpu = {}
            if workers == 1:
                api_ms, client_ms = cpu_ms(base, headers, api.pid, kept)
                cpu = {"api_cpu_ms_per_kept_read": api_ms, "client_cpu_ms_per_kept_read": client_ms,
                       "api_cpu_ms_per_health_check": cpu_ms(base, headers, api.pid, "/v1/health")[0]}  # fmt: skip
        with console.status("the explorer in Chromium..."):
            charts = explorer(base, credentials, items) if CHROMIUM.is_file() and not quick else None
        api.terminate()
        api.wait()
        raw = raw_sql(server.url, plan)
    finally:
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)
    figures = {
        "agents": AGENTS, "items": ITEMS, "requests": REQUESTS, "api_workers": workers, "load_seconds": load_s,
        "release_cut_seconds": cut_s, "release_publish_seconds": publish_s,
        "cold_p50_ms": statistics.median(cold), "cold_p99_ms": percentile(cold, 99), "cold_rps": cold_rps,
        "warm_p50_ms": statistics.median(warm), "warm_p99_ms": percentile(warm, 99), "warm_rps": warm_rps,
        "raw_sql_p50_ms": statistics.median(raw), "raw_sql_p99_ms": percentile(raw, 99),
    }  # fmt: skip
    figures["warm_p50_ratio_to_raw_sql"] = figures["warm_p50_ms"] / figures["raw_sql_p50_ms"]
    for (clients, conditional), measured in concurrent.items():
        for name, value in measured.items():
            figures[f"{'repeated' if conditional else 'warm'}_{name}_{clients}_clients"] = value
    figures.update(cpu)
    for kind, measured in by_wrk.items():
        figures.update({f"wrk_{kind}_{name}_16_connections": value for name, value in measured.items()})
    if charts is not None:
        figures.update(charts)
    for key, value in figures.items():
        console.print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")
    name = ("aggregate-quick" if quick else "aggregate") + (f"-{workers}-api-processes" if workers > 1 else "")
    console.print(f"saved to {save(name, figures)}")
    # The line from the load generator that costs less than the server, where there is one.
    source = "wrk_repeated_{}_16_connections" if by_wrk else "repeated_{}_16_clients"
    console.print(f"repeated read: {figures[source.format('rps')]:.0f} requests/s, "
                  f"p99 {figures[source.format('p99_ms')]:.1f} ms at 16 clients"
                  + (" (wrk)" if by_wrk else " (Python clients)"))  # fmt: skip


def explorer(base: str, credentials: tuple[str, str], items: list[str]) -> dict[str, float]:
    """The explorer as a researcher meets it: sign-in to the item list, then first charts by sex."""
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"]  # fmt: skip
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=args)
        page = browser.new_page()
        began = time.perf_counter()
        page.goto(f"{base}/explore")
        page.get_by_label("Client id").fill(credentials[0])
        page.get_by_label("Client secret").fill(credentials[1])
        page.get_by_role("button", name="Sign in").click()
        page.locator("#item option").first.wait_for(state="attached")
        signed_in = time.perf_counter() - began
        page.get_by_label("Break down by").select_option("sex")
        charts = []
        for item in random.Random(3).sample(items, CHARTS):
            page.get_by_label("Find an item").fill(item)
            page.get_by_label("Item", exact=True).select_option(item)
            t = time.perf_counter()
            page.get_by_role("button", name="Show table").click()
            page.wait_for_function(f"() => document.getElementById('result-title').textContent === 'gss / {item}'"
                                   " && document.querySelectorAll('#groups .bar-row').length > 0")  # fmt: skip
            charts.append((time.perf_counter() - t) * 1000)
        browser.close()
    return {"explorer_sign_in_to_items_s": signed_in, "explorer_first_chart_p50_ms": statistics.median(charts),
            "explorer_first_chart_max_ms": max(charts)}  # fmt: skip


def cut(settings: Settings, url: str, keys: KeyRing, items: list[str]) -> tuple[float, float]:
    """Seconds to cut the first release (its workload, the tables the plan reads asked for first, protected),
    and to publish it (every table in every format as a file)."""
    engine = create_engine(url)
    instruments = lambda key: load_instrument(key, Path("../shared/data"))  # noqa: E731
    with Session(engine) as session, session.begin():
        for item in items:
            for asked in {b for b in BREAKDOWN_CHOICES if b and (b.count(",") or b not in Policy(10).standing)}:
                ask(session, "gss", item, tuple(d for d in DIMENSIONS if d in asked.split(",")))
    began = time.perf_counter()
    with Session(engine) as session, session.begin():
        outcome = cut_release(session, keys, instruments, Policy(10), audit.SYSTEM)
        assert outcome.release is not None, outcome.reason
    cut_s, began = time.perf_counter() - began, time.perf_counter()
    ensure_published(make_sessionmaker(engine), Shelf(settings.release_files_path), load_signer(settings),
                     instruments, Path("../shared/data"))  # fmt: skip
    engine.dispose()
    return cut_s, time.perf_counter() - began


def raw_sql(url: str, plan: list[tuple[str, str]]) -> list[float]:
    """The endpoint's query, run directly: a stored table of one item."""
    engine = create_engine(url)
    latencies = []
    query = text("SELECT released FROM release_tables WHERE instrument = 'gss' AND item = :item AND breakdowns = :b")
    with engine.connect() as conn:
        for item, breakdowns in plan:
            t = time.perf_counter()
            conn.execute(
                query, {"item": item, "b": ",".join(d for d in BREAKDOWNS if d in breakdowns.split(","))}
            ).all()
            latencies.append((time.perf_counter() - t) * 1000)
    engine.dispose()
    assert all(b in BREAKDOWNS or not b for bs in BREAKDOWN_CHOICES for b in bs.split(","))
    return latencies


if __name__ == "__main__":
    main()
