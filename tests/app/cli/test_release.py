"""The open tier's releases from the command line, on a fresh data directory: what a release waits for, an
operator's request carried out by a worker (never by the command itself), and what a release cost."""

from pathlib import Path

import pytest

from tests.support.command_line import agentbank

LIFE_HISTORIES = "../shared/data/transcripts/fwp_life_histories/fwp_life_histories_part1of3.jsonl.gz"


@pytest.mark.cli
@pytest.mark.slow  # builds, answers and two releases, each command a process of its own
def test_a_release_is_asked_for_waited_on_and_cut_by_a_worker(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTBANK_SUPPRESSION_K", "3")
    histories = str(Path(__file__).resolve().parents[3] / LIFE_HISTORIES)
    empty = agentbank("release", "status")
    assert empty.returncode == 0, empty.stderr
    assert "0 agents can be released; a release needs 3" in empty.stdout and "mu = 1" in empty.stdout

    assert agentbank("ingest", histories, "--format", "fwp", "--limit", "3").returncode == 0
    assert agentbank("build").returncode == 0
    queued = agentbank("population", "queue", "--items", "cappun,gunlaw")
    assert queued.returncode == 0, queued.stderr
    assert agentbank("worker", "--burst").returncode == 0

    # With no worker running, the command queues the cut and says how to get it done.
    asked = agentbank("release", "cut", "--force", "--wait", "2")
    assert asked.returncode == 1 and "agentbank worker --burst" in asked.stdout
    assert agentbank("worker", "--burst").returncode == 0
    ready = agentbank("release", "status")
    assert ready.returncode == 0 and "nothing changed since the last release" in ready.stdout
    assert "releases so far" in ready.stdout
    # And without --force, nothing changed: the worker cuts nothing more.
    assert agentbank("release", "cut", "--wait", "0").returncode == 0
    assert agentbank("worker", "--burst").returncode == 0
    assert "nothing changed since the last release" in agentbank("release", "status").stdout
