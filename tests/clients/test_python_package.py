"""The Python client is a package of its own (``clients/python``): it imports nothing of the bank, and the
columns it gives an open table are the figures the bank serves, in the bank's order."""

import subprocess
import sys

from agentbank_client import api

from agentbank.publication.breakdowns import FIGURES


def test_the_clients_columns_are_the_banks_figures():
    assert api.FIGURES == FIGURES


def test_importing_the_client_loads_none_of_the_banks_code():
    bank = ("agentbank", "app", "interviewer", "evaluation", "migrations")
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, agentbank_client; print(' '.join(sorted(sys.modules)))"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout.split()  # fmt: skip
    assert "agentbank_client.api" in loaded
    assert not [name for name in loaded if name.split(".")[0] in bank]
