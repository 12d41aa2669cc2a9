"""The interviewer's model is called with no transaction open and the interview unlocked: another
request is never held up, and no database connection waits idle in a transaction for seconds."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import log as audit
from agentbank.core.settings import Settings
from agentbank.providers.fakes import ScriptedChatModel
from agentbank.runtime.bank import Bank
from app.api import create_app
from app.api.interviews.dependencies import get_services
from interviewer.deciding.decisions import NOTES_SCHEMA
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from interviewer.session import interviews, invitations
from interviewer.session.script import load_script, shorten
from tests.support.factories import SECRET, keyring

CONSENT = {"recording": True, "use": True, "withdrawal": True}


class ServerDiedError(Exception):
    """Stands for the server process ending while the interviewer's model decides."""


def watching(engine, participant: list):
    """A scripted interviewer that notes, at each call, what another connection sees while the model
    thinks: how many transactions wait open, and whether the interview's lock is free."""
    seen: list[tuple[int, bool]] = []

    def decide(_messages, schema):
        with engine.connect() as conn:
            waiting = conn.execute(
                text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                     "AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()")
            ).scalar_one()  # fmt: skip
        with Session(engine) as other, other.begin():
            try:
                interviews.current(other, participant[0], lock=True)
                free = True
            except interviews.InterviewBusyError:
                free = False
        seen.append((waiting, free))
        if schema == NOTES_SCHEMA:
            return {"notes": ["Grew up by the sea."]}
        return {"decision": {"action": "follow_up", "question": "What did you do next?"}}

    return decide, seen


@contextmanager
def interviewing(fresh_database, tmp_path, monkeypatch, services):
    """A server on its own database, with an interview begun: the client, its headers, the participant."""
    engine = create_engine(fresh_database)
    settings = Settings(secret_key=SECRET, data_dir=tmp_path, rate_limit_per_minute=10_000)
    bank = Bank(settings, engine, sessionmaker(engine, expire_on_commit=False), services.keys)
    monkeypatch.setattr(invitations, "load_script", lambda: shorten(load_script(), modules=1, seconds=600))
    try:
        app = create_app(settings, bank)
        app.dependency_overrides[get_services] = lambda: services
        with TestClient(app, base_url="http://localhost") as client:
            with Session(engine) as session, session.begin():
                code = invitations.create_invitation(session, audit.Actor("operator", "test"))
            started = client.post("/v1/interviews", json={"invite": code, "consent": CONSENT})
            with Session(engine) as session:
                participant = session.scalars(text("SELECT participant_id FROM interview_sessions")).one()
            yield engine, client, {"Authorization": f"Bearer {started.json()['token']}"}, participant
    finally:
        engine.dispose()


def test_the_model_decides_outside_any_transaction(fresh_database, tmp_path, monkeypatch):
    participant: list = []
    services = Services(keys=keyring(), chat=ScriptedChatModel(lambda m, s: {}), transcriber=FakeTranscriber())
    with interviewing(fresh_database, tmp_path, monkeypatch, services) as (engine, client, headers, who):
        participant.append(who)
        decide, seen = watching(engine, participant)
        services.chat = ScriptedChatModel(decide)
        answered = client.post("/v1/interviews/current/answer", json={"text": "I grew up by the sea."}, headers=headers)
        assert answered.status_code == 200, answered.text
        assert answered.json()["prompt"] == "What did you do next?"
        with Session(engine) as session:
            noted = session.scalars(text("SELECT notes_through FROM interview_sessions")).one()
    # The decision, then the notes on the answer once the reply had gone: neither inside a transaction.
    assert seen == [(0, True), (0, True)], seen
    assert noted == 2  # the answer's position: its notes are taken


def test_the_reply_a_resume_gives_an_answer_left_without_one_is_decided_outside_any_transaction(
    fresh_database, tmp_path, monkeypatch
):
    participant: list = []

    def dies(_messages, _schema):
        raise ServerDiedError

    services = Services(keys=keyring(), chat=ScriptedChatModel(dies), transcriber=FakeTranscriber())
    with interviewing(fresh_database, tmp_path, monkeypatch, services) as (engine, client, headers, who):
        participant.append(who)
        with pytest.raises(ServerDiedError):  # the answer is stored, the server gone before the reply
            client.post("/v1/interviews/current/answer", json={"text": "I grew up by the sea."}, headers=headers)
        decide, seen = watching(engine, participant)
        services.chat = ScriptedChatModel(decide)
        resumed = client.post("/v1/interviews/current/resume", headers=headers)
        assert resumed.status_code == 200, resumed.text
        assert resumed.json()["prompt"] == "What did you do next?" and not resumed.json()["awaiting_reply"]
    # The decision, then the notes on the answer once the reply had gone, as after an answer.
    assert seen == [(0, True), (0, True)], seen
