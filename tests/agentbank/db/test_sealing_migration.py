"""Upgrading a bank that kept personal data in the clear (migrations 0021, 0023): everything is sealed with each
participant's own key and opens again with it; a withdrawn participant's plaintext is dropped."""

from __future__ import annotations

import hashlib
import json
import uuid

import numpy as np
import pytest
from alembic import command
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from agentbank.core.settings import Settings
from agentbank.db.models.interviews import AUDIO_DIGEST
from agentbank.runtime.bank import open_keyring
from interviewer.hearing.partials import chunks_digest
from migrations.runner import alembic_config, upgrade
from tests.support.factories import SECRET


@pytest.fixture
def database_at(database_url: str):
    made: list[str] = []
    admin = create_engine(database_url, isolation_level="AUTOCOMMIT")

    def at(revision: str) -> tuple[str, str]:
        name = f"agentbank_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        made.append(name)
        url = make_url(database_url).set(database=name).render_as_string(hide_password=False)
        upgrade(alembic_config(url), revision)
        return url, name

    yield at
    with admin.connect() as conn:
        for name in made:
            conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture
def database_at_0020(database_at):
    return database_at("0020")


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


def test_the_digests_of_recorded_audio_are_keyed_and_come_back_on_a_downgrade(database_at, monkeypatch, tmp_path):
    url, name = database_at("0022")
    monkeypatch.setenv("AGENTBANK_SECRET_KEY", SECRET)
    monkeypatch.setenv("AGENTBANK_DATA_DIR", str(tmp_path))
    keys = open_keyring(Settings(), name)
    pid, sid, tid = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    wrapped, cipher = keys.new_key(pid)
    audio = [b"RIFF first piece", b"second piece"]
    plain = [hashlib.sha256(piece).hexdigest() for piece in audio]
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO participants (id, pseudonym, source_ref, consent, wrapped_key) "
                          "VALUES (:id, 'P-1', 's', 'consented', :k)"), {"id": pid, "k": wrapped})  # fmt: skip
        conn.execute(text("INSERT INTO transcripts (id, participant_id, version, status) VALUES (:t, :p, 1, 'draft')"),
                     {"t": tid, "p": pid})  # fmt: skip
        conn.execute(text("INSERT INTO interview_sessions (id, participant_id, transcript_id, script_key, "
                          "script_version, script_fingerprint, script, status, consent, consented_at, question_index, "
                          "follow_ups, seconds_used) VALUES (:s, :p, :t, 'k', 1, 'f', '{}', 'active', '{}', now(), 0, "
                          "0, '{}')"), {"s": sid, "p": pid, "t": tid})  # fmt: skip
        for seq, (piece, digest) in enumerate(zip(audio, plain, strict=True)):
            conn.execute(text("INSERT INTO audio_chunks (session_id, turn, seq, data_encrypted, sha256, bytes) "
                              "VALUES (:s, 1, :q, :d, :h, :b)"),
                         {"s": sid, "q": seq, "d": cipher.seal_bytes(piece), "h": digest, "b": len(piece)})  # fmt: skip
        conn.execute(text("INSERT INTO audio_partials (session_id, turn, start_sample, end_sample, chunks, "
                          "chunks_sha256, model, text_encrypted) VALUES (:s, 1, 0, 10, 1, :h, 'm', :t)"),
                     {"s": sid, "h": chunks_digest(plain[:1]), "t": cipher.seal("so")})  # fmt: skip
    upgrade(alembic_config(url))
    keyed = [cipher.digest(AUDIO_DIGEST, digest) for digest in plain]
    with engine.connect() as conn:
        assert conn.execute(text("SELECT sha256 FROM audio_chunks ORDER BY seq")).scalars().all() == keyed
        (whole,) = conn.execute(text("SELECT chunks_sha256 FROM audio_partials")).scalars().all()
        assert whole == chunks_digest(keyed[:1])  # the head start still matches the audio it came from
    command.downgrade(alembic_config(url), "0022")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT sha256 FROM audio_chunks ORDER BY seq")).scalars().all() == plain
    engine.dispose()
