import uuid

import pytest

from agentbank.core.errors import ConfigurationError
from agentbank.keys.crypto import (
    DataKeyDestroyedError,
    DecryptionError,
    KeyRing,
    encrypt,
    key_encryption_key,
    new_data_key,
    wrapped_version,
)
from agentbank.keys.keystore import FileKeyStore, MemoryKeyStore


def test_sealed_text_opens_only_for_its_participant():
    keys = KeyRing("s" * 40, MemoryKeyStore())
    alice, bob = uuid.uuid4(), uuid.uuid4()
    wrapped, cipher = keys.new_key(alice)
    blob = cipher.seal("I was born in Ohio.")
    assert b"Ohio" not in blob and b"Ohio" not in wrapped
    assert keys.cipher(alice, wrapped).open(blob) == "I was born in Ohio."
    with pytest.raises(DecryptionError):
        keys.cipher(bob, keys.new_key(bob)[0]).open(blob)
    with pytest.raises(DecryptionError):  # a key wrapped for alice does not unwrap as bob's
        keys.cipher(bob, wrapped)


def test_another_banks_keyring_cannot_unwrap(tmp_path):
    wrapped, _ = KeyRing("a" * 40, FileKeyStore(tmp_path / "a.json", "a" * 40)).new_key(pid := uuid.uuid4())
    other = KeyRing("b" * 40, MemoryKeyStore())
    other.store.current()  # it has a version 1 of its own
    with pytest.raises(DecryptionError):
        other.cipher(pid, wrapped)
    with pytest.raises(ConfigurationError, match="cannot be read with this AGENTBANK_SECRET_KEY"):
        KeyRing("b" * 40, FileKeyStore(tmp_path / "a.json", "b" * 40)).cipher(pid, wrapped)


def test_destroyed_key_reads_nothing():
    with pytest.raises(DataKeyDestroyedError):
        KeyRing("a" * 40, MemoryKeyStore()).cipher(uuid.uuid4(), None)


def test_a_destroyed_version_opens_nothing_and_is_in_no_file(tmp_path):
    path = tmp_path / "keyring.json"
    keys = KeyRing("s" * 40, FileKeyStore(path, "s" * 40))
    wrapped, cipher = keys.new_key(pid := uuid.uuid4())
    before = path.read_bytes()
    version = keys.store.add_version()
    moved = keys.rewrap(pid, wrapped, version)
    assert wrapped_version(wrapped) == 1 and wrapped_version(moved) == version == 2
    keys.store.destroy({1})
    # Another process reading the same file sees the same keyring.
    again = KeyRing("s" * 40, FileKeyStore(path, "s" * 40))
    assert again.store.versions() == [2]
    assert again.cipher(pid, moved).open(cipher.seal("still mine")) == "still mine"
    with pytest.raises(DataKeyDestroyedError):
        again.cipher(pid, wrapped)
    sealed_v1 = before.split(b'"1": "')[1].split(b'"')[0]
    assert sealed_v1 not in path.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keyring.json", "keyring.lock"]


def test_keys_wrapped_before_the_keyring_still_open_and_move_onto_it():
    secret = "s" * 40
    keys = KeyRing(secret, MemoryKeyStore())
    pid, data_key = uuid.uuid4(), new_data_key()
    legacy = encrypt(key_encryption_key(secret), data_key, b"data-key:" + pid.bytes)  # the old, headerless wrap
    assert wrapped_version(legacy) == 0
    assert keys.data_key(pid, legacy) == data_key
    version, _ = keys.store.current()
    assert keys.data_key(pid, keys.rewrap(pid, legacy, version)) == data_key
