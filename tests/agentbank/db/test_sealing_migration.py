"""Upgrading a bank that kept personal data in the clear (migration 0021): everything is sealed with each
participant's own key and opens again with it; a withdrawn participant's plaintext is dropped."""

from __future__ import annotations

import json
import uuid

import numpy as np
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from agentbank.runtime.bank import open_keyring
from agentbank.settings import Settings
from migrations.runner import alembic_config, upgrade
from tests.agentbank.factories import SECRET


@pytest.fixture
def database_at_0020(database_url: str):
    name = f"agentbank_{uuid.uuid4().hex[:12]}"
    admin = create_engine(database_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(database_url).set(database=name).render_as_string(hide_password=False)
    upgrade(alembic_config(url), "0020")
    yield url, name
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    admin.dispose()


def test_the_upgrade_seals_what_was_in_the_clear_with_each_persons_key(database_at_0020, monkeypatch, tmp_path):
    url, name = database_at_0020
    monkeypatch.setenv("AGENTBANK_SECRET_KEY", SECRET)
    monkeypatch.setenv("AGENTBANK_DATA_DIR", str(tmp_path))
    keys = open_keyring(Settings(), name)
    kept, gone = uuid.uuid4(), uuid.uuid4()
    wrapped, _ = keys.new_key(kept)
    engine = create_engine(url)
    with engine.begin() as conn:
        for pid, key in ((kept, wrapped), (gone, None)):
            conn.execute(text("INSERT INTO participants (id, pseudonym, source_ref, demographics, consent, wrapped_key)"
                              " VALUES (:id, :p, :s, CAST(:d AS jsonb), 'consented', :k)"),
                         {"id": pid, "p": f"P-{pid.hex[:8]}", "s": f"test:{pid}", "d": json.dumps({"polviews": 7}),
                          "k": key})  # fmt: skip
            tid, aid = uuid.uuid4(), uuid.uuid4()
            conn.execute(text("INSERT INTO transcripts (id, participant_id, version, status) "
                              "VALUES (:t, :p, 1, 'final')"), {"t": tid, "p": pid})  # fmt: skip
            conn.execute(text("INSERT INTO agents (id, participant_id, version, transcript_id, status, build) "
                              "VALUES (:a, :p, 1, :t, 'active', '{}')"), {"a": aid, "p": pid, "t": tid})  # fmt: skip
            conn.execute(text("INSERT INTO population_answers (agent_id, instrument, item, code, value) VALUES "
                              "(:a, 'gss', 'cappun', 2, 2.0), (:a, 'gss', 'grass', 1, 1.0)"), {"a": aid})  # fmt: skip
            conn.execute(text("INSERT INTO memories (agent_id, kind, position, word_count, text_encrypted, embedding) "
                              "VALUES (:a, 'chunk', 0, 3, :t, '[0.5,0.25,0.125]')"), {"a": aid, "t": b"x"})  # fmt: skip
            conn.execute(text("INSERT INTO report_cards (agent_id, instrument, run_id, condition, model, "
                              "prompt_version, items, accuracy, self_consistency) VALUES (:a, 'gss', 'r', "
                              "'interview', 'm', 'p', 30, 0.6, 0.8)"), {"a": aid})  # fmt: skip
    upgrade(alembic_config(url))
    cipher = keys.cipher(kept, wrapped)
    with engine.connect() as conn:
        demographics = dict(conn.execute(text("SELECT id, demographics_encrypted FROM participants")).all())
        assert cipher.open_json(demographics[kept]) == {"polviews": 7} and demographics[gone] is None
        answers = conn.execute(text("SELECT answers_encrypted FROM population_answers")).scalars().all()
        assert [cipher.open_json(a) for a in answers] == [{"cappun": [2, 2.0], "grass": [1, 1.0]}]  # theirs only
        (vector,) = conn.execute(text("SELECT embedding_encrypted FROM memories")).scalars().all()
        assert np.frombuffer(cipher.open_bytes(vector), dtype=np.float32).tolist() == [0.5, 0.25, 0.125]
        (card,) = conn.execute(text("SELECT scores_encrypted FROM report_cards")).scalars().all()
        assert cipher.open_json(card)["accuracy"] == 0.6
    engine.dispose()
