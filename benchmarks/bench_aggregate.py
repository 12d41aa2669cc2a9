"""The open tier under load: 1,000 agents × 173 GSS items of precomputed answers.

Measures the cost of cutting a release (every item's tables, each protected with the release's noise,
from answers sealed with each participant's key), then the distribution endpoint on loopback (p50/p99
latency, requests/s) against the same SQL run directly: cold and warm (every table is stored when the
release is cut), then warm again from 1, 4 and 16 clients at once (every request is audited: requests
per second should grow with the clients until the CPU is full, as no request waits for another's audit
event). Last, the explorer page in
headless Chromium: sign-in to the item list, and the time from "Show table" to the chart drawn.

Run: python -m benchmarks.bench_aggregate
"""

from __future__ import annotations

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

import httpx
from rich.console import Console
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from agentbank.access.clients import create_client
from agentbank.audit import log as audit
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.instruments import load_instrument
from agentbank.instruments.gss import load_gss, survey_items
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import FileKeyStore
from agentbank.open_tier.breakdowns import BREAKDOWNS
from agentbank.open_tier.releases import Policy, cut_release
from benchmarks.bench_release_privacy import populate as sealed_bank
from benchmarks.common import free_port, save
from migrations.runner import alembic_config, upgrade

AGENTS, ITEMS, REQUESTS = 1000, 173, 400
CLIENTS = (1, 4, 16)  # concurrent clients of the warm phase
SECRET = "benchmark-secret-" * 3
SERVER = (
    "import uvicorn; from app.api import create_app; from agentbank.settings import Settings; "
    "uvicorn.run(create_app(Settings()), host='127.0.0.1', port={port}, log_level='warning')"
)
BREAKDOWN_CHOICES = ["", "sex", "race", "sex,race", "party", "ideology,sex", "marital", "health,sex"]
CHARTS = 20  # tables the explorer draws, each a first look at its item
CHROMIUM = Path("/usr/bin/chromium")


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


def _concurrent(base: str, headers: dict[str, str], plan: list[tuple[str, str]], clients: int) -> tuple[float, float]:
    """Warm requests from ``clients`` clients at once, each audited: requests per second and p50 ms."""
    latencies: list[float] = []

    def one_client(requests: list[tuple[str, str]]) -> None:
        with httpx.Client(base_url=base, timeout=60) as client:
            for item, breakdowns in requests:
                t = time.perf_counter()
                r = client.get(f"/v1/open/instruments/gss/items/{item}/distribution",
                               params={"breakdowns": breakdowns}, headers=headers)  # fmt: skip
                latencies.append((time.perf_counter() - t) * 1000)
                assert r.status_code == 200, r.text

    shares = [plan[n::clients] for n in range(clients)]
    threads = [threading.Thread(target=one_client, args=(share,)) for share in shares]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(plan) / (time.perf_counter() - began), statistics.median(latencies)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
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
        with console.status("cutting a release..."):
            cut_s = cut(server.url, keys)
        env = {**os.environ, "AGENTBANK_DATABASE_URL": server.url, "AGENTBANK_SECRET_KEY": SECRET,
               "AGENTBANK_RATE_LIMIT_PER_MINUTE": "1000000"}  # fmt: skip
        api = subprocess.Popen([sys.executable, "-c", SERVER.format(port=port)], env=env)
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=30) as client:
            for _ in range(100):
                try:
                    client.get("/v1/health")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
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
            assert cold_preparing == warm_preparing == 0  # every table is there when the release is
            concurrent = {clients: _concurrent(base, headers, plan, clients) for clients in CLIENTS}
        with console.status("the explorer in Chromium..."):
            charts = explorer(base, credentials, items) if CHROMIUM.is_file() else None
        api.terminate()
        api.wait()
        raw = raw_sql(server.url, plan)
    finally:
        stop_embedded_server(root / "postgres")
        shutil.rmtree(root, ignore_errors=True)
    figures = {
        "agents": AGENTS, "items": ITEMS, "requests": REQUESTS, "load_seconds": load_s, "release_cut_seconds": cut_s,
        "cold_p50_ms": statistics.median(cold), "cold_p99_ms": percentile(cold, 99), "cold_rps": cold_rps,
        "warm_p50_ms": statistics.median(warm), "warm_p99_ms": percentile(warm, 99), "warm_rps": warm_rps,
        "raw_sql_p50_ms": statistics.median(raw), "raw_sql_p99_ms": percentile(raw, 99),
    }  # fmt: skip
    figures["warm_p50_ratio_to_raw_sql"] = figures["warm_p50_ms"] / figures["raw_sql_p50_ms"]
    for clients, (rps, p50) in concurrent.items():
        figures[f"warm_rps_{clients}_clients"], figures[f"warm_p50_ms_{clients}_clients"] = rps, p50
    if charts is not None:
        figures.update(charts)
    for key, value in figures.items():
        console.print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")
    console.print(f"saved to {save('aggregate', figures)}")


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


def cut(url: str, keys: KeyRing) -> float:
    """Seconds to cut the first release: every table of every item, protected."""
    engine = create_engine(url)
    began = time.perf_counter()
    with Session(engine) as session, session.begin():
        instruments = lambda key: load_instrument(key, Path("../shared/data"))  # noqa: E731
        outcome = cut_release(session, keys, instruments, Policy(10), audit.SYSTEM)
        assert outcome.release is not None, outcome.reason
    engine.dispose()
    return time.perf_counter() - began


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
