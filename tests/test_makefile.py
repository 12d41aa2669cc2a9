"""`make run` takes a port and installs again only when the project's dependencies changed."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("Makefile", "pyproject.toml", "clients/python/pyproject.toml"):  # the client installs beside
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()
    return tmp_path


def dry_run(project: Path, *args: str) -> str:
    return subprocess.run(["make", "-n", *args], cwd=project, capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_run_takes_a_port_and_reinstalls_only_after_pyproject_changes(project):
    assert "pip install" in dry_run(project, "run")  # never installed
    stamp = project / ".venv" / ".installed"
    stamp.touch()
    unchanged = dry_run(project, "run", "PORT=8123")
    assert "pip install" not in unchanged
    assert "agentbank serve --host 127.0.0.1 --port 8123" in unchanged
    later = stamp.stat().st_mtime + 5
    os.utime(project / "pyproject.toml", (later, later))
    assert "pip install" in dry_run(project, "run")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_fast_tests_share_out_what_is_left_between_their_workers(project):
    (project / ".venv" / ".installed").touch()
    fast = [line for line in dry_run(project, "test").splitlines() if '-m "not slow"' in line]
    assert len(fast) == 1 and "-n 2" in fast[0] and "--dist worksteal" in fast[0]
