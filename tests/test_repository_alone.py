"""The repository is enough: from a copy of it with no data folder beside it, the demo ingests its fictional
people, the shipped GSS panel is scored, and `make run` seeds the demo bank and cuts its first release.

Each test copies the repository's files (those git tracks or would track) into a temporary folder whose
parent holds nothing else, and runs the commands there, so that the code, the interviews and the data
come from the copy and nothing from beside the checkout.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from benchmarks.clone import CLI, borrow_environment, copy_repository
from tests.app.web.conftest import free_port

pytestmark = pytest.mark.cli


def run(clone: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """The `agentbank` command of the copy, run from it (its own code first on the path)."""
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(clone)}
    return subprocess.run([sys.executable, "-c", CLI, *args], cwd=clone, env=env, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_demo_and_the_evaluation_run_from_the_repository_alone(tmp_path):
    clone = copy_repository(tmp_path / "alone")
    assert sorted(p.name for p in (tmp_path / "alone").iterdir()) == ["agentbank"]  # nothing beside it
    where = subprocess.run(
        [sys.executable, "-c", "import agentbank, evaluation; from agentbank.core.settings import Settings; "
         "print(agentbank.__file__); print(evaluation.__file__); print(Settings().reference_data_dir)"],
        cwd=clone, env={**os.environ, "PYTHONPATH": str(clone)}, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert all(Path(p).is_relative_to(clone) for p in where[:2]), where  # the copy's code, not the checkout's
    assert not Path(where[2]).exists()  # no reference data beside the copy

    demo = run(clone, "demo")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "ingested 12 interview(s)" in demo.stdout and "fictional" in demo.stdout
    assert demo.stdout.count("P-") >= 24  # each agent's answers as it is built, then the table of all twelve

    scored = run(clone, "evaluate", "--dataset", "gss-panel06", "--conditions", "survey,population-mode",
                 "--sample", "3", "--items", "2", "--no-reasons")  # fmt: skip
    assert scored.returncode == 0, scored.stdout + scored.stderr
    assert "survey" in scored.stdout and "population-mode" in scored.stdout
    assert "2000 people" in scored.stdout  # the whole 2006 panel, from the shipped file

    asked = run(clone, "demo", "--life-histories", "2")  # the optional set, asked for without it: said plainly
    assert asked.returncode == 1 and "Traceback" not in asked.stderr
    assert "AGENTBANK_REFERENCE_DATA_DIR" in asked.stderr and "--life-histories" in asked.stderr


@pytest.mark.slow  # a server with its worker, building twelve agents (fake models)
@pytest.mark.skipif(shutil.which("make") is None or shutil.which("git") is None, reason="make or git is missing")
def test_make_run_from_a_clone_seeds_the_demo_and_releases_it(tmp_path, fresh_database):
    clone = copy_repository(tmp_path / "alone")
    borrow_environment(clone)  # installing would take minutes: `make run` finds it installed, runs the copy's code
    port = free_port()
    log = (tmp_path / "make-run.log").open("w")
    env = {**os.environ, "PYTHONPATH": str(clone), "AGENTBANK_DATABASE_URL": fresh_database,
           "AGENTBANK_RATE_LIMIT_PER_MINUTE": "100000"}  # fmt: skip
    server = subprocess.Popen(["make", "run", f"PORT={port}"], cwd=clone, env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        body = wait_for_release(f"http://127.0.0.1:{port}", server, deadline_s=300)
        assert body["participants"] == 12 and body["demo"] is not None
        assert body["release"]["demo_settings"] and body["release"]["k"] == 5 and body["release"]["mu"] == 8.0
        assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 200
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=60)
        log.close()
    said = (tmp_path / "make-run.log").read_text()
    assert "ingested the demo's 12 fictional interviews" in said and "no demo bank" not in said


def wait_for_release(url: str, server: subprocess.Popen, deadline_s: float) -> dict:
    """The bank's state once its first release is cut (each demo agent's build is followed by a cut)."""
    deadline = time.monotonic() + deadline_s
    body: dict = {}
    while time.monotonic() < deadline:
        assert server.poll() is None, "make run exited"
        try:
            body = httpx.get(f"{url}/v1/status", timeout=5).json()
            if body.get("release"):
                return body
        except httpx.TransportError:
            pass
        time.sleep(1)
    raise AssertionError(f"no release within {deadline_s:.0f} s: {body}")
