"""Shared helpers of the tests (moved from ``tests.agentbank.keys.test_key_rotation``)."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from agentbank.core.settings import Settings
from agentbank.db.embedded import start_embedded_server, stop_embedded_server
from agentbank.db.models import Transcript, Turn
from agentbank.keys.crypto import (
    NONCE_BYTES,
    WRAP_FORMAT,
    DecryptionError,
    decrypt,
    key_encryption_key,
)
from agentbank.keys.keystore import FileKeyStore, KeyStore
from migrations.runner import alembic_config, upgrade
from tests.support.factories import SECRET

LEGACY_WRAP_BYTES = NONCE_BYTES + 48  # nonce, 32-byte key, tag


SHORT_VARLENA_61 = (1 + LEGACY_WRAP_BYTES) << 1 | 1  # how PostgreSQL prefixes a 60-byte bytea on disk


def first_turn(session, participant_id: uuid.UUID) -> bytes:
    return session.scalars(
        select(Turn.text_encrypted)
        .join(Transcript, Transcript.id == Turn.transcript_id)
        .where(Transcript.participant_id == participant_id)
        .order_by(Turn.position)
    ).first()


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
