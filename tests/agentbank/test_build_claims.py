"""Build processes share the pending list: a participant claimed by one is skipped by the others."""

from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from agentbank.agents import BuildConfig, build_agent, claim_build, pending_participants
from agentbank.models import Participant
from agentbank.providers.fakes import HashingEmbedder, ScriptedChatModel
from agentbank.transcripts import store_interview
from tests.agentbank.factories import interview, keyring, responder


def test_a_claimed_or_finished_build_is_nobody_elses(fresh_database):
    engine = create_engine(fresh_database)
    keys, chat, embedder = keyring(), ScriptedChatModel(responder), HashingEmbedder()
    config = BuildConfig.of(chat, embedder, 0)
    with Session(engine) as session, session.begin():
        ann, bob = (store_interview(session, interview(f"file:{n}.json", 6), keys).id for n in ("ann", "bob"))

    first, second = Session(engine), Session(engine)
    try:
        with first.begin():
            assert claim_build(first, ann, config)  # the first process takes Ann
            with second.begin():
                assert not claim_build(second, ann, config)  # the second skips her while she is built
                assert claim_build(second, bob, config)  # and takes Bob instead
            build_agent(first, first.get_one(Participant, ann), chat=chat, embedder=embedder, keys=keys,
                        config=config)  # fmt: skip
        with second.begin():  # the claim ended with the first's transaction, and Ann is built now
            assert not claim_build(second, ann, config)
            assert [p.id for p in pending_participants(second, config)] == [bob]
        with second.begin():  # a builder that gave up (rolled back) leaves Bob free for anyone
            assert claim_build(second, bob, config)
    finally:
        first.close()
        second.close()
        engine.dispose()
