"""Crypto-shredding: after a withdrawal no key anywhere in the bank's files opens the person's data."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text

from agentbank.audit import log as audit
from agentbank.building.transcripts import store_interview
from agentbank.core.settings import Settings
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.db.models import Participant, Transcript, Turn
from agentbank.keys.crypto import (
    NONCE_BYTES,
    WRAP_FORMAT,
    DataKeyDestroyedError,
    DecryptionError,
    decrypt,
    key_encryption_key,
)
from agentbank.keys.keystore import FileKeyStore, KeyStore
from agentbank.keys.rotation import purge_unused, rotate
from agentbank.participants.withdrawal import withdraw
from agentbank.runtime.bank import open_keyring
from migrations.runner import alembic_config, upgrade
from tests.agentbank.factories import SECRET, interview, keyring

LEGACY_WRAP_BYTES = NONCE_BYTES + 48  # nonce, 32-byte key, tag
SHORT_VARLENA_61 = (1 + LEGACY_WRAP_BYTES) << 1 | 1  # how PostgreSQL prefixes a 60-byte bytea on disk


def first_turn(session, participant_id: uuid.UUID) -> bytes:
    return session.scalars(
        select(Turn.text_encrypted)
        .join(Transcript, Transcript.id == Turn.transcript_id)
        .where(Transcript.participant_id == participant_id)
        .order_by(Turn.position)
    ).first()


def test_rotation_rewraps_everyone_else_and_drops_the_one_withdrawing(db):
    keys = keyring()
    alice = store_interview(db, interview("file:alice.json"), keys)
    bob = store_interview(db, interview("file:bob.json"), keys)
    old = bob.wrapped_key
    rotation = rotate(db, keys, dropping=alice.id)
    assert alice.wrapped_key is None
    assert bob.wrapped_key != old and rotation.rewrapped >= 1
    assert keys.cipher(bob.id, bob.wrapped_key).open(first_turn(db, bob.id)).startswith("Question 0")
    # Until the transaction commits the old version lives: a rollback would need it.
    assert set(rotation.retired) <= set(keys.store.versions())


def test_purge_keeps_the_versions_rows_need(db):
    keys = keyring()
    carol = store_interview(db, interview("file:carol.json"), keys)
    unused = keys.store.add_version()
    needed = carol.wrapped_key
    keys.store.add_version()  # the newest always stays
    assert unused in purge_unused(db, keys)
    assert keys.cipher(carol.id, needed).open(first_turn(db, carol.id))


@pytest.fixture
def bank_files() -> Iterator[tuple[Settings, str]]:
    """A data directory of its own: an embedded server (write-ahead log included) and the keyring."""
    root = Path(tempfile.mkdtemp(prefix="agentbank-shred-"))  # outside the home directory (root)
    settings = Settings(data_dir=root, secret_key=SECRET)
    server = start_embedded_server(settings.postgres_dir)
    try:
        upgrade(alembic_config(server.url))
        yield settings, server.url
    finally:
        stop_embedded_server(settings.postgres_dir)
        shutil.rmtree(root, ignore_errors=True)


def keys_that_open(
    root: Path, secret: str, participant_id: uuid.UUID, sample: bytes, token: KeyStore | None = None
) -> int:
    """How many wrapped keys in any file under ``root`` yield a data key that opens ``sample``.

    The attacker holds the bank's secret and every file: it tries the key derived from the secret on
    every headerless 60-byte value, and every KEK any keyring file still holds on every versioned wrap;
    with a ``token`` (and its PIN), every version the token still holds, unwrapping inside it.
    """
    keks = {0: key_encryption_key(secret)}
    for path in (root / "keyring").glob("*.json"):
        store = FileKeyStore(path, secret)
        keks |= {v: store.get(v) for v in store.versions()}
    unwrappers: dict[int, Callable[[bytes, bytes], bytes | None]] = {
        v: (lambda blob, context, kek=kek: decrypt(kek, blob, context)) for v, kek in keks.items()
    }
    if token is not None:
        unwrappers |= {v: (lambda blob, context, v=v: token.unwrap(v, blob, context)) for v in token.versions()}
    found = 0
    for path in (p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        windows = []
        start = data.find(bytes([SHORT_VARLENA_61]))
        while start != -1:
            windows.append((0, data[start + 1 : start + 1 + LEGACY_WRAP_BYTES], b""))
            start = data.find(bytes([SHORT_VARLENA_61]), start + 1)
        for version in unwrappers.keys() - {0}:
            header = bytes([WRAP_FORMAT]) + version.to_bytes(4, "big")
            start = data.find(header)
            while start != -1:
                windows.append((version, data[start + 5 : start + 5 + LEGACY_WRAP_BYTES], header))
                start = data.find(header, start + 1)
        for version, window, header in windows:
            try:
                data_key = unwrappers[version](window, b"data-key:" + participant_id.bytes + header)
                if data_key is None:
                    continue
                decrypt(data_key, sample, participant_id.bytes)
            except DecryptionError:  # most windows are not keys
                continue
            found += 1
    return found


@pytest.mark.slow
def test_after_withdrawal_no_file_holds_a_key_to_the_persons_data(bank_files):
    settings, url = bank_files
    engine = create_engine(url)
    sessions = make_sessionmaker(engine)
    keys = open_keyring(settings, engine.url.database)
    with transaction(sessions) as session:
        alice = store_interview(session, interview("file:alice.json"), keys)
        bob = store_interview(session, interview("file:bob.json"), keys)
    with sessions() as session:
        alice_turn, bob_turn = first_turn(session, alice.id), first_turn(session, bob.id)
    secret = settings.secret_key.get_secret_value()
    assert keys_that_open(settings.data_dir, secret, alice.id, alice_turn) >= 1  # the scan finds live keys

    with transaction(sessions) as session:
        withdraw(session, keys, alice.id, audit.Actor("participant", str(alice.id)), ledger=None)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM participants"))
        conn.execute(text("CHECKPOINT"))

    assert keys_that_open(settings.data_dir, secret, alice.id, alice_turn) == 0
    with sessions() as session:
        stored = {p.id: p.wrapped_key for p in session.scalars(select(Participant))}
    assert stored[alice.id] is None
    with pytest.raises(DataKeyDestroyedError):
        keys.cipher(alice.id, alice.wrapped_key)  # the key held in memory before: its KEK is gone
    assert keys.cipher(bob.id, stored[bob.id]).open(bob_turn).startswith("Question 0")
    assert keys_that_open(settings.data_dir, secret, bob.id, bob_turn) >= 1
    assert len(keys.store.versions()) == 1
    engine.dispose()
