"""Every example on the documentation's pages runs, in page order, against a bank of its own: a server and a
worker in processes of their own, on the fake models, seeded with a published release, two built agents and
a team with an approved project. A changed flag or route breaks this test, not a reader.

Shell blocks run each in its own ``bash -e -o pipefail`` in a folder the page's blocks share; Python blocks
share one namespace; R blocks run each in its own ``Rscript`` with the R client installed. A block marked
``<!-- skip: next "why" -->`` is shown only."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from unittest import SkipTest

import pytest

from tests.docs import pages
from tests.support.live_bank import seed_bank
from tests.support.r_client import install_r_client, r_missing
from tests.support.servers import ServerProcess

pytestmark = pytest.mark.slow  # a server, a worker and the page's commands, each a process of its own

PAGES = [page for page in pages.pages() if pages.runs_examples(page)]
BLOCK_S = 180


class Bank:
    """What a page's examples run against: the environment they see and the folder they share."""

    def __init__(self, environment: dict[str, str], folder: Path) -> None:
        self.environment = environment
        self.folder = folder

    def run(self, command: list[str], source: str, what: str) -> None:
        done = subprocess.run([*command, source], env=self.environment, cwd=self.folder, capture_output=True,
                              text=True, timeout=BLOCK_S)  # fmt: skip
        if done.returncode != 0:
            raise AssertionError(f"{what} exited {done.returncode}:\n{source}\n--- output\n{done.stdout}{done.stderr}")


@pytest.fixture(scope="session")
def r_library(tmp_path_factory) -> Path | None:
    """The R client installed once for every page (None where R or its packages are missing)."""
    if r_missing():
        return None
    return install_r_client(tmp_path_factory.mktemp("docs-r-library"))


@pytest.fixture
def bank(fresh_database, tmp_path, r_library, monkeypatch) -> Iterator[Bank]:
    data = tmp_path / "bank-data"
    seeded = seed_bank(fresh_database, data)
    server = ServerProcess(database_url=fresh_database, data_dir=data, log_path=tmp_path / "server.log").start()
    worker_log = (tmp_path / "worker.log").open("w")
    worker = subprocess.Popen([sys.executable, "-c", "from app.cli import main; main()", "worker"],
                              env=server.environment(), stdout=worker_log, stderr=subprocess.STDOUT,
                              start_new_session=True)  # fmt: skip
    given = {
        "BANK": server.url,
        "CLIENT_ID": seeded["reader"][0], "CLIENT_SECRET": seeded["reader"][1],
        "TEAM_ID": seeded["team"][0], "TEAM_SECRET": seeded["team"][1],
        "PROJECT": seeded["project"], "AGENT": seeded["agents"][0], "AGENTS": ",".join(seeded["agents"]),
    }  # fmt: skip
    environment = {**server.environment(), **given}
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}"
    if r_library is not None:
        environment["R_LIBS"] = f"{r_library}{os.pathsep}{environment.get('R_LIBS', '')}"
    for key, value in environment.items():
        if key in given or key.startswith("AGENTBANK_"):
            monkeypatch.setenv(key, value)  # what the page's Python blocks read from os.environ
    folder = tmp_path / "reader"
    folder.mkdir()
    monkeypatch.chdir(folder)
    try:
        yield Bank(environment, folder)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        worker_log.close()
        server.stop()


@pytest.mark.parametrize("page", PAGES, ids=pages.name)
def test_every_example_on_the_page_runs(page, bank, r_library):
    if r_library is None and "r" in pages.languages(page):
        pytest.skip(f"the page has R examples and {r_missing()}")

    def shell(example) -> None:
        bank.run(["bash", "-e", "-o", "pipefail", "-c"], example.parsed, f"the shell block at line {example.line}")

    def r(example) -> None:
        bank.run(["Rscript", "-e"], example.parsed, f"the R block at line {example.line}")

    ran, skipped = 0, []
    for example in pages.sybil(shell, r).parse(page):
        try:
            example.evaluate()
        except SkipTest as why:
            skipped.append(str(why))
            continue
        ran += not isinstance(example.parsed, tuple)  # a skip's own directive parses as (action, reason)
    assert ran, f"{pages.name(page)} runs none of its examples (skipped: {skipped})"
