import uuid

import pytest

from agentbank.crypto import DataKeyDestroyedError, DecryptionError, KeyRing


def test_sealed_text_opens_only_for_its_participant():
    keys = KeyRing("s" * 40)
    alice, bob = uuid.uuid4(), uuid.uuid4()
    wrapped, cipher = keys.new_key(alice)
    blob = cipher.seal("I was born in Ohio.")
    assert b"Ohio" not in blob and b"Ohio" not in wrapped
    assert keys.cipher(alice, wrapped).open(blob) == "I was born in Ohio."
    with pytest.raises(DecryptionError):
        keys.cipher(bob, keys.new_key(bob)[0]).open(blob)
    with pytest.raises(DecryptionError):  # a key wrapped for alice does not unwrap as bob's
        keys.cipher(bob, wrapped)


def test_another_bank_secret_cannot_unwrap():
    wrapped, _ = KeyRing("a" * 40).new_key(pid := uuid.uuid4())
    with pytest.raises(DecryptionError):
        KeyRing("b" * 40).cipher(pid, wrapped)


def test_destroyed_key_reads_nothing():
    with pytest.raises(DataKeyDestroyedError):
        KeyRing("a" * 40).cipher(uuid.uuid4(), None)
