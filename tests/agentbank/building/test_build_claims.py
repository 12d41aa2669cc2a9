"""Build processes share the pending list: a participant claimed by one is skipped by the others, and a
build holds no transaction open while its models work."""

from sqlalchemy import create_engine, func, select

from agentbank.audit import log as audit
from agentbank.building.agents import BuildConfig, pending_participants
from agentbank.building.build import build_claim, build_now
from agentbank.building.transcripts import store_interview
from agentbank.db import make_sessionmaker, transaction
from agentbank.db.models import Agent
from agentbank.participants.withdrawal import withdraw
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel
from tests.support.answers import Watching
from tests.support.factories import interview, keyring, responder


def test_a_claimed_or_finished_build_is_nobody_elses(fresh_database):
    engine = create_engine(fresh_database)
    sessions = make_sessionmaker(engine)
    keys, chat, embedder = keyring(), ScriptedChatModel(responder), HashingEmbedder()
    config = BuildConfig.of(chat, embedder, 0)
    with transaction(sessions) as session:
        ann, bob = (store_interview(session, interview(f"file:{n}.json", 6), keys).id for n in ("ann", "bob"))
    models = {"chat": chat, "embedder": embedder, "keys": keys, "config": config}
    try:
        with build_claim(sessions, ann) as first:
            assert first  # one process takes Ann
            assert build_now(sessions, ann, **models) is None  # another skips her while she is built
            assert build_now(sessions, bob, **models) is not None  # and builds Bob instead
        assert build_now(sessions, ann, **models) is not None  # the claim ended with its block
        assert build_now(sessions, ann, **models) is None  # Ann is built now: nobody builds her twice
        with sessions() as session:
            assert pending_participants(session, config) == []
            assert session.scalar(select(func.count()).select_from(Agent)) == 2
    finally:
        engine.dispose()


def test_a_build_holds_no_transaction_while_its_models_work(fresh_database):
    engine = create_engine(fresh_database)
    sessions = make_sessionmaker(engine)
    keys, chat, embedder = keyring(), Watching(fresh_database), HashingEmbedder()
    with transaction(sessions) as session:
        ann = store_interview(session, interview("file:ann.json", 6), keys).id
    try:
        agent = build_now(sessions, ann, chat=chat, embedder=embedder, keys=keys,
                          config=BuildConfig.of(chat, embedder, 0))  # fmt: skip
        assert agent is not None and len(chat.open_transactions) == 5  # four experts and the persona
        assert chat.open_transactions == [0] * 5
    finally:
        engine.dispose()


def test_a_participant_who_withdraws_during_the_build_gets_no_agent(fresh_database):
    engine = create_engine(fresh_database)
    sessions = make_sessionmaker(engine)
    keys, embedder = keyring(), HashingEmbedder()

    def withdraw_at_persona(messages, schema):
        if "persona" in (schema or {}).get("properties", {}):  # the last model call of the build
            with transaction(sessions) as session:
                withdraw(session, keys, ann, audit.Actor("participant", "self"), ledger=None)
        return responder(messages, schema)

    chat = ScriptedChatModel(withdraw_at_persona)
    with transaction(sessions) as session:
        ann = store_interview(session, interview("file:ann.json", 6), keys).id
    try:
        assert build_now(sessions, ann, chat=chat, embedder=embedder, keys=keys,
                         config=BuildConfig.of(chat, embedder, 0)) is None  # fmt: skip
        with sessions() as session:
            assert session.scalar(select(func.count()).select_from(Agent)) == 0
    finally:
        engine.dispose()
