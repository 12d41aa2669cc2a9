"""A newcomer's first hour: from `make run` in a fresh clone (nothing beside it) to the explorer's first chart.

A copy of the repository stands for the clone (``benchmarks.clone``: no ``shared/`` data folder beside
it, this machine's installed packages as its ``.venv``, so installing is not timed) and ``make run`` is
started there on a new data directory, with the embedded models and the bank's defaults. Measured from
that start, each with the machine's load average at that moment:

- the API answering (``/v1/ready``),
- the first agent built, and every later one (``/v1/status``),
- the first release of the open tier,
- the first chart drawn in the explorer: Chromium signs in with a reader's client (made as the README says,
  `agentbank clients create`), asks for ``cappun`` as soon as the API answers and waits on the page,
  which says how far along the bank is and draws the table once the release is cut, and again at the
  next release when every group of a release's table is hidden (too few people beside its noise).

Run: python -m benchmarks.bench_first_hour [--limit-s 1800] [--keep] [--quick]
(``--quick``: fake models, the benchmark's own machinery in about a minute; its figures are not kept.)
The last line reads: ``first chart in X s (load L); API A s, first agent B s, first release C s``; the
result, with a screenshot of the first chart, is kept under ``benchmarks/results/``.
The machine should be idle: the load beside each figure says whether it was.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.clone import CLI, borrow_environment, copy_repository
from benchmarks.common import free_port, save

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package, as the browser tests use
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
TARGET_S = 600.0  # the promise: the first chart within ten minutes of `make run`


class Clock:
    """Seconds since the start, each milestone with the 1-minute load average when it was reached."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.marks: dict[str, dict[str, float]] = {}
        self.agents: list[dict[str, float]] = []

    def now(self) -> float:
        return round(time.monotonic() - self.started, 1)

    def mark(self, name: str) -> None:
        if name not in self.marks:
            self.marks[name] = {"s": self.now(), "load_1min": round(os.getloadavg()[0], 2)}
            print(f"{self.marks[name]['s']:7.1f} s  {name} (load {self.marks[name]['load_1min']})", flush=True)

    def agent(self, count: int) -> None:
        while len(self.agents) < count:
            self.agents.append({"agents": len(self.agents) + 1, "s": self.now(),
                                "load_1min": round(os.getloadavg()[0], 2)})  # fmt: skip
            print(f"{self.agents[-1]['s']:7.1f} s  agent {len(self.agents)} built", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit-s", type=float, default=1800, help="give up after this many seconds")
    parser.add_argument("--keep", action="store_true", help="keep the clone and its data directory")
    parser.add_argument("--quick", action="store_true", help="fake models: the machinery only, nothing kept")
    args = parser.parse_args()
    if not CHROMIUM.is_file() or shutil.which("make") is None:
        sys.exit(f"needs make and Chromium at {CHROMIUM}")
    folder = Path(tempfile.mkdtemp(prefix="agentbank-newcomer-"))
    clone = copy_repository(folder / "alone")
    borrow_environment(clone)
    data_dir = folder / "data"  # beside the clone's folder, not in it: the clone's parent holds only the clone
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBANK_")}
    env.update(AGENTBANK_DATA_DIR=str(data_dir), PYTHONPATH=str(clone), COLUMNS="200")
    if args.quick:
        env.update({f"AGENTBANK_{k}": "fake" for k in ("CHAT_PROVIDER", "EMBEDDER_PROVIDER", "TRANSCRIBER", "SPEAKER")})
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    idle = [round(x, 2) for x in os.getloadavg()]
    print(f"load before the start (1, 5, 15 min): {idle}; {os.cpu_count()} CPUs", flush=True)
    log_path = folder / "make-run.log"
    clock = Clock()
    with log_path.open("w") as log:
        server = subprocess.Popen(["make", "run", f"PORT={port}"], cwd=clone, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        try:
            shot = folder / "first-chart.png"
            outcome = follow(clock, url, clone, env, server, args.limit_s, shot)
        finally:
            os.killpg(server.pid, signal.SIGINT)
            try:
                server.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
    figures: dict[str, Any] = {
        "what": "make run in a copy of the repository with nothing beside it (installed environment borrowed, "
        "install not timed) to the explorer's first chart, embedded models, demo bank",
        "load_before_start_1_5_15_min": idle, "milestones": clock.marks, "agents_built": clock.agents,
        "first_chart_within_10_minutes": "first chart drawn" in clock.marks
        and clock.marks["first chart drawn"]["s"] <= TARGET_S, **outcome,
    }  # fmt: skip
    if not args.quick:
        path = save("first-hour", figures)
        if shot.is_file():
            shutil.copy(shot, path.with_suffix(".png"))
        print(f"wrote {path}")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        print(f"kept {folder}")
    marks = clock.marks
    if "first chart drawn" not in marks:
        print(f"no chart within {args.limit_s:.0f} s: {outcome.get('last_state')}")
        sys.exit(1)
    chart, seconds = marks["first chart drawn"], {name: f"{mark['s']:.0f} s" for name, mark in marks.items()}
    print(f"first chart in {chart['s']:.0f} s (load {chart['load_1min']}); API {seconds['API answers']}, "
          f"first agent {seconds['first agent built']}, first release {seconds['first release cut']}")  # fmt: skip


def follow(clock: Clock, url: str, clone: Path, env: dict[str, str], server: subprocess.Popen,
           limit_s: float, shot: Path) -> dict[str, Any]:  # fmt: skip
    """Wait for each milestone in turn; the explorer is opened as soon as the API answers."""
    from playwright.sync_api import sync_playwright

    state: dict[str, Any] = {}
    with httpx.Client(base_url=url, timeout=10) as http:
        while not _ready(http):
            if server.poll() is not None or clock.now() > limit_s:
                return {"error": "the API never answered", "last_state": state}
            time.sleep(0.2)
        clock.mark("API answers")
        client_id, secret = _reader(clone, env)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=BROWSER_ARGS)
            page = browser.new_page()
            page.goto(f"{url}/explore")
            page.get_by_label("Client id").fill(client_id)
            page.get_by_label("Client secret").fill(secret)
            page.get_by_role("button", name="Sign in").click()
            page.get_by_label("Find an item").fill("cappun")
            page.get_by_role("button", name="Show table").click()
            clock.mark("explorer asked for cappun")
            releases_seen = 0
            while clock.now() < limit_s and server.poll() is None:
                state = http.get("/v1/status").json()
                if state["agents"]:
                    clock.mark("first agent built")
                clock.agent(state["agents"])
                release = state["release"]
                if release is not None:
                    clock.mark("first release cut")
                if page.locator("#groups .bar").count():
                    clock.mark("first chart drawn")
                    page.screenshot(path=str(shot), full_page=True)
                    return {"release_of_first_chart": release["id"] if release else None, "last_state": state,
                            "explorer_said": page.locator("#message").inner_text()}  # fmt: skip
                if release is not None and release["id"] > releases_seen and page.locator("#result").is_visible():
                    # A table is shown with every group hidden: the page shows it again at the next release.
                    releases_seen = release["id"]
                    clock.mark(f"release {release['id']}: table shown, every group hidden")
                time.sleep(2)
            browser.close()
    return {"error": "no chart before the limit", "last_state": state}


def _ready(http: httpx.Client) -> bool:
    try:
        return http.get("/v1/ready").status_code == 200
    except httpx.TransportError:
        return False


def _reader(clone: Path, env: dict[str, str]) -> tuple[str, str]:
    """A client with the aggregate:read scope, made as the README says, by the clone's own command."""
    command = [sys.executable, "-c", CLI, "clients", "create", "newcomer", "--scope", "aggregate:read"]
    made = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True, timeout=300, check=True).stdout
    found = re.search(r"client_id:\s+(\S+)\s+client_secret:\s+(\S+)", made)
    assert found, made
    return found.group(1), found.group(2)


if __name__ == "__main__":
    main()
