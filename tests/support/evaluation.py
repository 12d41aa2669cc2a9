"""Shared helpers of the tests (moved from ``tests.evaluation.runs.test_runs``)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from agentbank.audit.log import SYSTEM
from agentbank.core.settings import Settings
from agentbank.participants.battery import answers
from agentbank.providers.fakes import HashingEmbedder
from evaluation.runs.execute import Models
from tests.support.factories import SECRET, keyring


@pytest.fixture
def settings(database_url: str, evaluation_database: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("AGENTBANK_DATABASE_URL", database_url)
    monkeypatch.setenv("AGENTBANK_SECRET_KEY", SECRET)
    return Settings()


@pytest.fixture
def evaluation_database(database_url: str, monkeypatch: pytest.MonkeyPatch):
    """A database name of this test's own for respondents, dropped afterwards."""
    name = f"agentbank_eval_{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("AGENTBANK_EVALUATION_DATABASE", name)
    yield name
    admin = create_engine(make_url(database_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _models(chat) -> Models:
    return Models(chat, HashingEmbedder(), keyring(), 1200, keyring())


START = datetime(2026, 3, 1, 9, tzinfo=UTC)


def truth(n: int, k: int, codes: list[int]) -> tuple[int, int]:
    """Person n's answer to the run's item k in wave 1 and wave 2 (a few changed on the retest)."""
    first = codes[0] if (n + k) % 3 == 0 else codes[1]
    second = first if (n + 2 * k) % 4 else (codes[1] if first == codes[0] else codes[0])
    return first, second


def big_five(n: int, wave: int, reverse: bool) -> int:
    """Person n's answer to a Big Five item: positively keyed items 1 + n mod 5 (one more on odd people's
    retest), reverse-keyed ones 3, so that a trait is (v + 3) / 2."""
    if reverse:
        return 3
    return min(5, 1 + n % 5 + (wave == 2 and n % 2))


def take_both_waves(session, keys, participant, battery, items: list[str], n: int, gss) -> None:
    """The participant's survey and retest, as their page would store them (other questions declined)."""
    for wave, when in ((1, START), (2, START + timedelta(days=15))):
        for key in battery.keys(wave):
            value = None
            if key.startswith("gss:") and key[4:] in items:
                k = items.index(key[4:])
                value = truth(n, k, gss.item(key[4:]).codes)[wave - 1]
            elif key.startswith("ipip50:"):
                value = big_five(n, wave, battery.item(key).item.meta["reverse"])
            answers.save_answer(session, keys, participant.id, battery, wave, key, value, when, actor=SYSTEM)
        answers.complete(session, keys, participant.id, battery, wave, when, timedelta(days=14), actor=SYSTEM)
