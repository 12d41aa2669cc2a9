"""The R client (``clients/r/agentbank``) against the live server: the package installs, and its testthat
suite runs against a bank in its own process with a worker answering its jobs: the open tier as tibbles in
GSS codes with labels, a job submitted once, waited for and read, plain and as a labelled table."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.live_bank import seed_bank
from tests.support.r_client import PACKAGE, install_r_client, r_missing

pytestmark = pytest.mark.slow  # the bank, a worker and R, each a process of its own

# testthat's results, counted, on one line this test reads.
RUN = """
results <- as.data.frame(testthat::test_dir(commandArgs(TRUE)[1], package = "agentbank", load_package = "installed",
                                            stop_on_failure = FALSE,
                                            reporter = "summary"))
cat(sprintf("\\ntestthat: passed=%d failed=%d skipped=%d errors=%d\\n", sum(results$passed),
            sum(results$failed), sum(results$skipped), sum(results$error)))
"""


def test_the_r_client_suite_against_the_live_bank(serve, fresh_database, tmp_path):
    missing = r_missing()
    if missing:
        pytest.skip(missing)
    library = install_r_client(tmp_path / "r-library")

    bank = seed_bank(fresh_database, tmp_path / "server-data")
    server = serve()
    worker_log = (tmp_path / "worker.log").open("w")
    worker = subprocess.Popen([sys.executable, "-c", "from app.cli import main; main()", "worker"],
                              env=server.environment(), stdout=worker_log, stderr=subprocess.STDOUT,
                              start_new_session=True)  # fmt: skip
    try:
        environment = {
            **os.environ,
            "R_LIBS": f"{library}{os.pathsep}{os.environ.get('R_LIBS', '')}",
            "AGENTBANK_R_URL": server.url,
            "AGENTBANK_R_READER": ",".join(bank["reader"]),
            "AGENTBANK_R_TEAM": ",".join(bank["team"]),
            "AGENTBANK_R_PROJECT": bank["project"],
            "AGENTBANK_R_AGENTS": ",".join(bank["agents"]),
        }
        run = subprocess.run(["Rscript", "-e", RUN, str(PACKAGE / "tests" / "testthat")], env=environment,
                             capture_output=True, text=True, timeout=420)  # fmt: skip
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        worker_log.close()
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    counts = dict(part.split("=") for part in output.split("testthat: ")[-1].split()[:4])
    assert counts["failed"] == "0" and counts["errors"] == "0", output
    assert counts["skipped"] == "0", output  # every test ran against the bank
    assert int(counts["passed"]) >= 40, output
