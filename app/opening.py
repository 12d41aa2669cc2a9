"""Opening the bank from the application, which alone knows both the domain and its migrations."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from agentbank.core.settings import Settings
from agentbank.runtime import bank
from migrations.runner import SCHEMA


@contextmanager
def open_bank(settings: Settings, *, models: bool = True) -> Iterator[bank.Bank]:
    """``agentbank.runtime.bank.open_bank`` with the schema of this version's migrations."""
    with bank.open_bank(settings, schema=SCHEMA, models=models) as opened:
        yield opened
