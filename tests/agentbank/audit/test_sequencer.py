"""Audit events are written without a lock and chained shortly after by a sequencer, in order, once."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit.log import Actor, record, sequence
from agentbank.audit.sequencer import Sequencer
from agentbank.audit.signing_keys import AuditSigner
from agentbank.audit.verification import verify_log
from agentbank.db import make_sessionmaker, transaction
from agentbank.db.models import AuditEvent

SIGNER = AuditSigner.from_secret("audit-test-secret-" * 3)
READER = Actor("client", "reader")


@pytest.fixture
def sessions(fresh_database: str) -> Iterator[sessionmaker[Session]]:
    engine = create_engine(fresh_database)
    yield make_sessionmaker(engine)
    engine.dispose()


def chained(sessions: sessionmaker[Session]) -> list[int | None]:
    with sessions() as session:
        return list(session.scalars(select(AuditEvent.seq).order_by(AuditEvent.id)))


def test_unrelated_appends_never_wait_for_each_other(sessions):
    with sessions() as slow, slow.begin():
        record(slow, READER, "aggregate.read", "open")  # a long request, still open
        with sessions() as quick, quick.begin():
            # Under one global lock this append would wait for the open transaction, and time out here.
            quick.execute(text("SET LOCAL lock_timeout = '500ms'"))
            record(quick, READER, "aggregate.read", "open")
        assert chained(sessions) == [None]  # the quick one committed first, not yet chained
    with transaction(sessions) as session:
        assert sequence(session) == 2
    assert sorted(chained(sessions)) == [1, 2]
    with sessions() as session:
        result = verify_log(session, SIGNER.public_key)
    assert result.ok and result.events == 2 and result.unchained == 0


def test_events_committed_before_a_crash_are_chained_by_the_next_sequencer(sessions):
    for n in range(3):
        with transaction(sessions) as session:
            record(session, READER, "aggregate.read", "open", details={"n": n})
    # The process that wrote them died before it chained anything; any other process's sequencer does.
    with sessions() as session:
        waiting = verify_log(session, SIGNER.public_key)
    assert waiting.ok and waiting.unchained == 3 and "not chained yet" in waiting.notes[-1]
    sequencer = Sequencer(sessions, interval_s=0.05).start()
    try:
        deadline = time.monotonic() + 10
        while None in chained(sessions) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        sequencer.stop()
    assert chained(sessions) == [1, 2, 3]
    with sessions() as session:
        assert verify_log(session, SIGNER.public_key).ok


def test_an_event_is_chained_once_and_its_content_never_changes(sessions):
    with transaction(sessions) as session:
        first = record(session, READER, "aggregate.read", "open")
    with transaction(sessions) as session:
        sequence(session)
        record(session, READER, "aggregate.read", "open")
    with sessions() as session, session.begin():
        session.execute(text("SET LOCAL ROLE agentbank_app"))
        assert sequence(session) == 1  # the application may give a new event its place
        statements = {
            "UPDATE audit_events SET seq = 7 WHERE id = :id": "append-only",  # but never move one
            "UPDATE audit_events SET hash = NULL, prev_hash = NULL, seq = NULL WHERE id = :id": "append-only",
            "UPDATE audit_events SET action = 'other' WHERE id = :id": "permission denied",
            "DELETE FROM audit_events WHERE id = :id": "permission denied",
        }
        for statement, refusal in statements.items():
            with pytest.raises(DBAPIError, match=refusal), session.begin_nested():
                session.execute(text(statement), {"id": first})
    # Nor may the owner, without switching the trigger off.
    with sessions() as session, session.begin(), pytest.raises(DBAPIError, match="append-only"):
        session.execute(text("UPDATE audit_events SET seq = 9 WHERE id = :id"), {"id": first})
    with sessions() as session:
        assert session.scalar(select(func.count()).where(AuditEvent.seq.is_not(None))) == 2
        assert verify_log(session, SIGNER.public_key).ok
