"""Ingest and build on the real database with the scripted model."""

import numpy as np
import pytest
from sqlalchemy import func, select, text, update
from sqlalchemy.exc import DBAPIError

from agentbank.building.agents import BuildConfig, find_agent, pending_participants
from agentbank.building.reflection import EXPERT_KEYS
from agentbank.building.transcripts import load_turns
from agentbank.db.models import Agent, Memory, Participant, Transcript, Turn
from tests.support.factories import CANARY, build, keyring


def test_build_stores_chunks_and_each_experts_reflections(db):
    participant, agent, chat, embedder, keys = build(db)
    rows = db.execute(select(Memory.kind, func.count()).where(Memory.agent_id == agent.id).group_by(Memory.kind))
    kinds = dict(rows.all())
    assert kinds["chunk"] >= 2
    experts = set(db.scalars(select(Memory.expert).where(Memory.agent_id == agent.id, Memory.kind == "reflection")))
    assert experts == set(EXPERT_KEYS)
    assert agent.build["chat_model"] == "scripted" and agent.build["prompt_version"].startswith("p-")
    sealed = db.scalar(select(Memory.embedding_encrypted).where(Memory.agent_id == agent.id).limit(1))
    vector = np.frombuffer(keys.cipher(participant.id, participant.wrapped_key).open_bytes(sealed), dtype=np.float32)
    assert vector.shape == (384,)  # sealed like the text it embeds
    # Four experts over one window, plus the persona.
    assert len(chat.calls) == 5


def test_rebuild_is_skipped_until_the_configuration_changes(db):
    participant, agent, chat, embedder, _ = build(db)
    assert participant not in pending_participants(db, BuildConfig.of(chat, embedder, 0))
    assert participant in pending_participants(db, BuildConfig.of(chat, embedder, 500))


def test_no_plaintext_in_encrypted_columns(db):
    participant, agent, *_ = build(db)
    db.flush()
    needle = CANARY.encode()
    for table, column in [
        ("transcript_turns", "text_encrypted"),
        ("memories", "text_encrypted"),
        ("agents", "persona_encrypted"),
        ("participants", "wrapped_key"),
    ]:
        found = db.execute(text(f"SELECT count(*) FROM {table} WHERE position(:n in {column}) > 0"), {"n": needle})
        assert found.scalar_one() == 0, f"{table}.{column} holds plaintext"
    # And the turns do decrypt back to the text.
    cipher = keyring().cipher(participant.id, participant.wrapped_key)
    assert any(CANARY in t.text for t in load_turns(db, agent.transcript_id, cipher))


def test_final_transcripts_cannot_change(db):
    participant, agent, *_ = build(db)
    turn_id = db.scalar(select(Turn.id).where(Turn.transcript_id == agent.transcript_id).limit(1))
    for statement in [
        update(Turn).where(Turn.id == turn_id).values(text_encrypted=b"x"),
        update(Transcript).where(Transcript.id == agent.transcript_id).values(status="draft"),
        Turn.__table__.insert().values(transcript_id=agent.transcript_id, position=999, speaker="participant",
                                       text_encrypted=b"x"),
        Turn.__table__.delete().where(Turn.id == turn_id),
    ]:  # fmt: skip
        with pytest.raises(DBAPIError, match="is final"), db.begin_nested():
            db.execute(statement)


def test_agents_found_by_pseudonym_or_id(db):
    participant, agent, *_ = build(db)
    assert find_agent(db, participant.pseudonym)[0].id == agent.id
    assert find_agent(db, str(agent.id))[1].id == participant.id
    db.execute(update(Participant).where(Participant.id == participant.id).values(consent="withdrawn"))
    db.expire_all()
    with pytest.raises(Exception, match="no active agent"):
        find_agent(db, participant.pseudonym)


def test_second_build_supersedes_the_first(db):
    from agentbank.building.build import build_agent

    participant, first, chat, embedder, keys = build(db)
    second = build_agent(
        db, participant, chat=chat, embedder=embedder, keys=keys, config=BuildConfig.of(chat, embedder, 100)
    )
    db.refresh(first)
    assert (first.status, second.status, second.version) == ("superseded", "active", 2)
    assert db.scalar(select(func.count()).select_from(Agent).where(Agent.status == "active")) == 1
