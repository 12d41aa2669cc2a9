"""Every benchmark stays importable: a refactor that breaks one fails here, not months later."""

import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import benchmarks

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_"))


def test_the_benchmarks_are_found():
    assert {"bench_answering", "bench_aggregate", "bench_voice"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_a_benchmark_imports_and_has_an_entry_point(name):
    module = importlib.import_module(f"benchmarks.{name}")
    assert callable(getattr(module, "main", None)), f"benchmarks.{name} has no main()"


def test_a_second_run_the_same_day_keeps_the_first_result(tmp_path):
    from benchmarks.common import save

    first, second = save("bench", {"run": 1}, tmp_path), save("bench", {"run": 2}, tmp_path)
    assert first != second and second.name.endswith("-2.json")
    assert '"run": 1' in first.read_text() and '"run": 2' in second.read_text()


# The --quick modes that run in minutes: each is run whole, so a change that breaks one (as the answering
# benchmark's naive mode once was, with a TypeError) fails here. Figures are printed, never asserted.
QUICK = {
    "bench_throughput": r"ratio to ideal: \d+\.\d+$",
    "bench_answering": r"build: \d+\.\d s$",
    "bench_builds": r"nobody built twice: yes\nbuilds: ratio to ideal \d+(\.\d+)?$",
    "bench_bank_validity": r"scoring \d+ s$",
    "bench_keystore": r"the file keyring at \d+(\.\d+)? times the token's rate$",
    "bench_studies": r"status: \d+(\.\d+)? ms median$",
    "bench_turn_end": r"with Smart Turn: last word to end of turn p50 \d+\.\d+ s; cut-in rate \d+\.\d%$",
    "bench_interviews": (
        r"interviews at once: \d+ within p95 3 s \(embedded\)\ninterviews at once: \d+ within p95 3 s \(remote fakes\)$"
    ),
}
# A benchmark whose quick run takes too long for the suite runs a smaller one here (one that is never saved).
SMALLER = {"bench_interviews": ["--remote-ladder", "1,2", "--embedded-ladder", "1", "--answers", "1"]}


@pytest.mark.slow
@pytest.mark.cli
@pytest.mark.parametrize("name", sorted(QUICK))
def test_a_quick_benchmark_runs_to_its_last_line(name, tmp_path):
    env = {**os.environ, "AGENTBANK_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    command = [sys.executable, "-m", f"benchmarks.{name}", "--quick", *SMALLER.get(name, [])]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    last_lines = "\n".join(done.stdout.strip().splitlines()[-2:])  # a pattern may name the line before
    assert re.search(QUICK[name], last_lines), done.stdout[-2000:]
