"""The R client (``clients/r/agentbank``) for the tests that run it: whether R and its packages are here, and
the package installed into a library of the test's own."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "r" / "agentbank"
NEEDS = ("httr2", "testthat", "tibble", "jsonlite", "haven", "openssl")
INSTALL = "r-base-core r-cran-httr2 r-cran-testthat r-cran-tibble r-cran-jsonlite r-cran-haven"


def r_missing() -> str | None:
    """Why the R client cannot run here, or None."""
    if shutil.which("Rscript") is None:
        return f"Rscript is not installed (Debian: {INSTALL})"
    check = "m <- Filter(function(p) !requireNamespace(p, quietly = TRUE), commandArgs(TRUE)); cat(m)"
    run = subprocess.run(["Rscript", "-e", check, *NEEDS], capture_output=True, text=True, timeout=120)
    missing = run.stdout.split()
    return f"R lacks the packages {', '.join(missing)} (Debian: {INSTALL})" if missing else None


def install_r_client(library: Path) -> Path:
    """The R client installed into ``library`` (made if needed)."""
    library.mkdir(parents=True, exist_ok=True)
    installed = subprocess.run(["R", "CMD", "INSTALL", f"--library={library}", str(PACKAGE)],
                               capture_output=True, text=True, timeout=300)  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return library
