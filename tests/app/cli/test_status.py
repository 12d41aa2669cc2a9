"""Where the bank stands, from the command line: queued builds named instead of "no agents", a status
command, and the list of agents by pseudonym (embedded database, fake models)."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.command_line import SAMPLE, agentbank

QUEUE_BUILDS = """
from agentbank.building.agents import queue_builds
from app.opening import open_bank
from agentbank.db import transaction
from agentbank.core.settings import Settings
with open_bank(Settings(), models=False) as bank, transaction(bank.sessions) as session:
    print(queue_builds(session))
"""


@pytest.mark.cli
def test_queued_builds_are_named_then_listed_as_agents(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert agentbank("db", "upgrade").returncode == 0
    assert agentbank("ingest", str(SAMPLE / "joon_park_sample_interview.json")).returncode == 0
    queued = subprocess.run([sys.executable, "-c", QUEUE_BUILDS], capture_output=True, text=True, env=os.environ)
    assert queued.stdout.strip() == "1", queued.stderr

    waiting = agentbank("survey", "--items", "CAPPUN")
    assert waiting.returncode == 1 and "1 builds queued, 0 running" in waiting.stdout
    assert "1 builds queued, 0 running" in agentbank("agents").stdout
    before = agentbank("status")
    assert before.returncode == 0 and "builds: 1 queued, 0 running, 0 failed, 0 done" in before.stdout
    assert "agents: none yet" in before.stdout

    assert agentbank("worker", "--burst").returncode == 0
    after = agentbank("status")
    assert "builds: 0 queued, 0 running, 0 failed, 1 done" in after.stdout and "agents: 1 active" in after.stdout
    listed = agentbank("agents")
    assert listed.returncode == 0 and "not validated" in listed.stdout
    pseudonym = next(word for word in listed.stdout.split() if word.startswith("P-"))

    surveyed = agentbank("survey", "--items", "CAPPUN", "--agents", pseudonym)
    assert surveyed.returncode == 0, surveyed.stderr
    assert pseudonym in surveyed.stdout
    # No run file of agents' answers lands anywhere unasked (a withdrawal could not reach it).
    data_dir = Path(os.environ["AGENTBANK_DATA_DIR"])
    assert not list(data_dir.rglob("*.csv")) and not list(tmp_path.glob("*.csv"))
    written = tmp_path / "answers.csv"
    named = agentbank("survey", "--items", "CAPPUN", "--agents", pseudonym, "--csv", str(written))
    assert named.returncode == 0, named.stderr
    assert [row["agent"] for row in csv.DictReader(written.open())] == [pseudonym]
    assert "withdrawal cannot reach it" in " ".join(named.stdout.split())
