"""Envelope encryption of participant data.

Each participant has a random data key; everything personal about them (transcript turns, memories,
reflections, cached answers) is encrypted with it (AES-256-GCM). The data key is stored only wrapped
by the bank's key-encryption key, derived from ``AGENTBANK_SECRET_KEY``. Destroying a participant's
wrapped key (withdrawal) makes all of their ciphertext unreadable, wherever copies of it lie.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import uuid

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from agentbank.errors import AgentBankError

NONCE_BYTES = 12


class DataKeyDestroyedError(AgentBankError):
    """The participant withdrew: their data key is gone and their data cannot be read."""

    code = "participant_withdrawn"
    status_code = 410


class DecryptionError(AgentBankError):
    """Ciphertext could not be decrypted: wrong key, tampered data, or a destroyed key."""

    code = "decryption_failed"
    status_code = 500


def key_encryption_key(secret: str) -> bytes:
    """The 256-bit key that wraps data keys, derived from the bank's secret."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"agentbank/kek/v1", info=b"wrap data keys").derive(
        secret.encode()
    )


def new_data_key() -> bytes:
    """A fresh random 256-bit data key."""
    return AESGCM.generate_key(bit_length=256)


def encrypt(key: bytes, plaintext: bytes, context: bytes) -> bytes:
    """AES-GCM with a random nonce; ``context`` is authenticated, binding ciphertext to its owner."""
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(key).encrypt(nonce, plaintext, context)


def decrypt(key: bytes, blob: bytes, context: bytes) -> bytes:
    """The plaintext of ``encrypt``; raises DecryptionError on a wrong key, context or tampering."""
    try:
        return AESGCM(key).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], context)
    except (InvalidTag, ValueError) as exc:
        raise DecryptionError("stored data could not be decrypted") from exc


class Cipher:
    """Encrypts and decrypts one participant's data with their data key."""

    def __init__(self, participant_id: uuid.UUID, data_key: bytes) -> None:
        self._context = participant_id.bytes
        self._key = data_key

    def seal(self, text: str) -> bytes:
        """Encrypt a text."""
        return encrypt(self._key, text.encode(), self._context)

    def open(self, blob: bytes) -> str:
        """Decrypt a text sealed for the same participant."""
        return decrypt(self._key, blob, self._context).decode()

    def seal_bytes(self, data: bytes) -> bytes:
        """Encrypt raw bytes (recorded audio)."""
        return encrypt(self._key, data, self._context)

    def open_bytes(self, blob: bytes) -> bytes:
        """Decrypt bytes sealed for the same participant."""
        return decrypt(self._key, blob, self._context)


def wrap_key(kek: bytes, data_key: bytes, participant_id: uuid.UUID) -> bytes:
    """The data key encrypted under the key-encryption key, bound to its participant."""
    return encrypt(kek, data_key, b"data-key:" + participant_id.bytes)


def unwrap_key(kek: bytes, wrapped: bytes, participant_id: uuid.UUID) -> bytes:
    """The data key of ``wrap_key``."""
    return decrypt(kek, wrapped, b"data-key:" + participant_id.bytes)


class KeyRing:
    """Creates and unwraps participants' data keys with the bank's key-encryption key."""

    def __init__(self, secret: str) -> None:
        self._kek = key_encryption_key(secret)
        # A separate derived key, so a canary says nothing about the key-encryption key.
        self._canary_key = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=b"agentbank/canary/v1", info=b"agent canaries"
        ).derive(secret.encode())

    def canary(self, agent_id: uuid.UUID) -> str:
        """The agent's secret marker: HMAC of its id under the bank's secret, 24 lower-case letters and digits.

        Planted in the agent's prompt so that a model leaking its context leaks the marker, which the
        output check looks for. Stable per agent (the prompt prefix stays byte-identical), never stored.
        """
        digest = hmac.new(self._canary_key, b"canary:" + agent_id.bytes, hashlib.sha256).digest()
        return base64.b32encode(digest[:15]).decode().lower()

    def new_key(self, participant_id: uuid.UUID) -> tuple[bytes, Cipher]:
        """A fresh data key for a participant: its wrapped form to store, and a cipher to use now."""
        data_key = new_data_key()
        return wrap_key(self._kek, data_key, participant_id), Cipher(participant_id, data_key)

    def cipher(self, participant_id: uuid.UUID, wrapped: bytes | None) -> Cipher:
        """The cipher of a participant whose wrapped key is ``wrapped``."""
        if wrapped is None:
            raise DataKeyDestroyedError("this participant withdrew; their data no longer exists")
        return Cipher(participant_id, unwrap_key(self._kek, wrapped, participant_id))
