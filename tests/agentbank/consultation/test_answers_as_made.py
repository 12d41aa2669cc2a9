"""Agents' answers are made outside any transaction, kept as they are made, and many at once.

On a database of its own (no test transaction around it), so what is committed, and when, is real.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import log as audit
from agentbank.consultation.answering import AgentUnavailableError
from agentbank.consultation.door import Grant
from agentbank.core.errors import ProviderError
from agentbank.core.settings import Settings
from agentbank.db import transaction
from agentbank.db.models import AnswerRecord, AuditEvent
from agentbank.instruments import load_instrument, select_items
from agentbank.participants.withdrawal import withdraw
from agentbank.providers.fakes import ScriptedChatModel
from tests.support.answers import Watching, bank_of
from tests.support.factories import responder

GSS = load_instrument("gss", Path("."))
ITEMS = select_items(GSS, ["cappun", "gunlaw", "grass", "polviews", "natenvir", "natheal"])
GRANT = Grant.operator("checking how answers are made")


def stored(sessions: sessionmaker[Session], agent_id: Any) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).where(AnswerRecord.agent_id == agent_id)) or 0


def uses(sessions: sessionmaker[Session], agent_id: Any) -> int:
    with sessions() as session:
        query = select(func.count()).where(AuditEvent.agent_id == agent_id, AuditEvent.action == GRANT.action)
        return session.scalar(query) or 0


def test_no_model_call_runs_inside_a_transaction(sessions, fresh_database):
    chat = Watching(fresh_database)
    door, _, [(_, agent_id)] = bank_of(sessions, chat)
    answers = door.survey(sessions, GRANT, agent_id, GSS, ITEMS).answers
    (opened,) = door.ask(sessions, GRANT, agent_id, ["Where did you grow up?"]).answers
    assert len(answers) == len(ITEMS) and opened.cited_turns
    assert len(chat.open_transactions) == len(ITEMS) + 1
    assert chat.open_transactions == [0] * (len(ITEMS) + 1)
    assert uses(sessions, agent_id) == 2


def test_answers_are_kept_as_made_and_a_failed_consultation_resumes_where_it_stopped(sessions):
    def failing_third(messages, schema):
        if len(chat.calls) == 3:
            return ProviderError("the endpoint went away")
        return responder(messages, schema)

    chat = ScriptedChatModel(failing_third)
    door, _, [(_, agent_id)] = bank_of(sessions, chat)
    with pytest.raises(ProviderError):
        door.survey(sessions, GRANT, agent_id, GSS, ITEMS)
    assert stored(sessions, agent_id) == 2  # committed, though the consultation failed
    assert uses(sessions, agent_id) == 0  # nothing was released, so nothing is audited

    chat.calls.clear()
    chat.script = responder
    answers = door.survey(sessions, GRANT, agent_id, GSS, ITEMS).answers
    assert len(chat.calls) == len(ITEMS) - 2  # only what was missing is asked again
    assert sum(a.cached for a in answers) == 2 and len(answers) == len(ITEMS)
    assert stored(sessions, agent_id) == len(ITEMS) and uses(sessions, agent_id) == 1


def test_a_withdrawal_during_the_calls_releases_and_keeps_nothing(sessions):
    def withdraw_at_second(messages, schema):
        if len(chat.calls) == 2:  # no transaction is open: the withdrawal commits at once
            with transaction(sessions) as session:
                withdraw(session, keys, participant_id, audit.Actor("participant", "self"), ledger=None)
        return responder(messages, schema)

    chat = ScriptedChatModel(withdraw_at_second)
    door, keys, [(participant_id, agent_id)] = bank_of(sessions, chat)
    with pytest.raises(AgentUnavailableError):
        door.survey(sessions, GRANT, agent_id, GSS, ITEMS)
    assert len(chat.calls) == 2  # the calls stop at the first answer that finds the withdrawal
    assert stored(sessions, agent_id) == 0 and uses(sessions, agent_id) == 0


class Slow(ScriptedChatModel):
    """A chat model that takes a moment per call and records the most calls it had in flight at once."""

    def __init__(self) -> None:
        super().__init__(responder)
        self.in_flight = self.peak = 0
        self._lock = threading.Lock()

    def complete(self, request):  # type: ignore[no-untyped-def]
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            time.sleep(0.05)
            with self._lock:
                return super().complete(request)
        finally:
            with self._lock:
                self.in_flight -= 1


def test_a_process_keeps_at_most_its_calls_in_flight_whoever_asks(sessions):
    chat = Slow()
    door, _, built = bank_of(sessions, chat, agents=2, calls_in_flight=3)
    results: dict[Any, int] = {}

    def survey(agent_id: Any) -> None:
        results[agent_id] = len(door.survey(sessions, GRANT, agent_id, GSS, ITEMS).answers)

    threads = [threading.Thread(target=survey, args=(agent_id,)) for _, agent_id in built]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    door.close()
    assert results == {agent_id: len(ITEMS) for _, agent_id in built}
    assert len(chat.calls) == 2 * len(ITEMS)
    assert chat.peak == 3  # several at once, and never more than the process allows


def test_the_embedded_model_answers_one_call_at_a_time(tmp_path):
    assert Settings(chat_provider="embedded", chat_calls_in_flight=8, data_dir=tmp_path).calls_in_flight == 1
    remote = Settings(chat_provider="openai", chat_model="m", chat_calls_in_flight=8, data_dir=tmp_path)
    assert remote.calls_in_flight == 8
