"""The production topology on one machine (deploy/host): its scripts run only commands and settings the bank
accepts, and, where the distribution's PostgreSQL with pgvector and nginx are installed, it carries the mixed
load through a SIGKILL of one API process and one worker (the topology benchmark's quick mode)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentbank.core.settings import Settings
from app.cli import cli

ROOT = Path(__file__).resolve().parents[1]
HOST = ROOT / "deploy" / "host"
TOPOLOGY = (HOST / "topology.sh").read_text()


def debian_packages() -> bool:
    """PostgreSQL's server with the pgvector extension, and nginx, as deploy/host/install.sh installs them."""
    servers = Path("/usr/lib/postgresql")
    majors = [p.name for p in servers.iterdir() if (p / "bin" / "postgres").exists()] if servers.is_dir() else []
    pgvector = any(Path(f"/usr/share/postgresql/{major}/extension/vector.control").exists() for major in majors)
    return pgvector and shutil.which("nginx") is not None


@pytest.mark.parametrize("script", ["install.sh", "topology.sh"])
def test_the_scripts_parse(script):
    done = subprocess.run(["bash", "-n", str(HOST / script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# As topology.sh spells each command it runs, and the same command for the command line's parser.
COMMANDS = {
    'serve --host 127.0.0.1 --port "$port" --no-worker --no-demo': ["serve", "--host", "127.0.0.1", "--port", "8101",
                                                                    "--no-worker", "--no-demo"],
    'spawn "worker-$n" worker': ["worker"],
    '"$AGENTBANK" db upgrade': ["db", "upgrade"],
}  # fmt: skip


@pytest.mark.parametrize(("written", "args"), COMMANDS.items(), ids=list(COMMANDS))
def test_every_command_it_runs_is_one_the_bank_accepts(written, args):
    assert written in TOPOLOGY
    result = CliRunner().invoke(cli, [*args, "--help"])
    assert result.exit_code == 0, result.output


def test_every_setting_it_writes_exists():
    fields = {f"AGENTBANK_{name.upper()}" for name in Settings.model_fields}
    written = set(re.findall(r"^(AGENTBANK_[A-Z_]+)=", TOPOLOGY, re.MULTILINE))
    assert written >= {"AGENTBANK_ENVIRONMENT", "AGENTBANK_RATE_LIMIT_STORAGE", "AGENTBANK_LOG_FORMAT"}
    assert written <= fields


@pytest.mark.slow
@pytest.mark.cli
@pytest.mark.skipif(
    not debian_packages(),
    reason="the distribution's PostgreSQL with pgvector, or nginx, is not installed (run deploy/host/install.sh)",
)
def test_the_topology_loses_nothing_when_an_api_process_and_a_worker_are_killed(tmp_path):
    env = {**os.environ, "AGENTBANK_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench_topology", "--quick"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=540)  # fmt: skip
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    pattern = r"^mixed load: \d+ requests, 0 errors, \d+ cut by the kill, lost 0, duplicated 0, audit verified$"
    assert re.search(pattern, last), done.stdout[-2000:]
