"""Envelope encryption of participant data.

Each participant has a random data key; everything personal about them (transcript turns, memories,
reflections, cached answers, demographics, their agent's coded answers and scores) is encrypted with it
(AES-256-GCM), and a digest that must be compared is an HMAC under a key derived from it, so it dies with
it. The data key is stored only wrapped by a key-encryption key (KEK) of the bank's versioned keyring
(``keystore``). Withdrawal re-wraps
everyone else's key under a new KEK and destroys the old one (``key_rotation``), so the withdrawn
participant's wrapped key, wherever copies of it lie, opens nothing, and neither does their ciphertext.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import uuid
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from agentbank.core.errors import AgentBankError
from agentbank.keys.aead import NONCE_BYTES, decrypt, encrypt
from agentbank.keys.aead import DecryptionError as DecryptionError  # raised from here, where callers look for it
from agentbank.keys.keystore import KeyStore


class DataKeyDestroyedError(AgentBankError):
    """The participant withdrew: their data key is gone and their data cannot be read."""

    code = "participant_withdrawn"
    status_code = 410


def key_encryption_key(secret: str) -> bytes:
    """The 256-bit key that wraps data keys, derived from the bank's secret."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"agentbank/kek/v1", info=b"wrap data keys").derive(
        secret.encode()
    )


def new_data_key() -> bytes:
    """A fresh random 256-bit data key."""
    return AESGCM.generate_key(bit_length=256)


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

    def seal_json(self, value: Any) -> bytes:
        """Encrypt a JSON value (keys sorted, so equal values give equal plaintexts)."""
        return self.seal(json.dumps(value, sort_keys=True, separators=(",", ":")))

    def open_json(self, blob: bytes) -> Any:
        """Decrypt a JSON value sealed with ``seal_json``."""
        return json.loads(self.open(blob))

    def digest(self, purpose: str, text: str) -> str:
        """A keyed digest of ``text`` (HMAC-SHA256 under a key derived from the data key for ``purpose``):
        comparable while the participant is in the bank, meaningless once their key is destroyed."""
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"agentbank/digest/v1", info=purpose.encode()).derive(
            self._key
        )
        return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()

    def seal_bytes(self, data: bytes) -> bytes:
        """Encrypt raw bytes (recorded audio)."""
        return encrypt(self._key, data, self._context)

    def open_bytes(self, blob: bytes) -> bytes:
        """Decrypt bytes sealed for the same participant."""
        return decrypt(self._key, blob, self._context)


WRAP_FORMAT = 1  # first byte of a versioned wrapped key; keys wrapped before versions are headerless


def wrap_header(version: int) -> bytes:
    """What leads a wrapped key: the format and the KEK version (authenticated with the wrap)."""
    return bytes([WRAP_FORMAT]) + version.to_bytes(4, "big")


def wrap_context(participant_id: uuid.UUID, header: bytes) -> bytes:
    """What a wrap authenticates: the participant it belongs to and its header."""
    return b"data-key:" + participant_id.bytes + header


def wrap_key(kek: bytes, data_key: bytes, participant_id: uuid.UUID, version: int) -> bytes:
    """The data key encrypted under KEK ``version``, bound to its participant; the version leads the blob."""
    header = wrap_header(version)
    return header + encrypt(kek, data_key, wrap_context(participant_id, header))


def wrapped_version(wrapped: bytes) -> int:
    """The KEK version a wrapped key needs (0: the legacy key derived from the secret)."""
    if len(wrapped) == 5 + NONCE_BYTES + 48 and wrapped[0] == WRAP_FORMAT:
        return int.from_bytes(wrapped[1:5], "big")
    return 0


def unwrap_key(kek: bytes, wrapped: bytes, participant_id: uuid.UUID) -> bytes:
    """The data key of ``wrap_key`` (or of a legacy, headerless wrap)."""
    if wrapped_version(wrapped) == 0:
        return decrypt(kek, wrapped, wrap_context(participant_id, b""))
    return decrypt(kek, wrapped[5:], wrap_context(participant_id, wrapped[:5]))


class KeyRing:
    """Creates, unwraps and re-wraps participants' data keys with the bank's versioned KEKs.

    New data keys are wrapped by the store's newest KEK. The store does the wrapping and unwrapping
    itself, so a store in a token (``hsm``) never lets its KEKs out. Version 0 is the KEK derived from the
    secret, which wrapped keys before the keyring existed: it is read, never written, and a rotation
    moves every such key onto a random KEK.
    """

    def __init__(self, secret: str, store: KeyStore) -> None:
        self.store = store
        self._legacy_kek = key_encryption_key(secret)
        # A separate derived key, so a canary says nothing about the key-encryption keys.
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
        """A fresh data key for a participant: its wrapped form to store, and a cipher to use now.

        Callers that store it take ``key_rotation.hold_keyring`` in the same transaction first, so
        that no rotation destroys the version while the new row is not yet committed.
        """
        data_key = new_data_key()
        return self._wrap(participant_id, data_key, self.store.current_version()), Cipher(participant_id, data_key)

    def data_key(self, participant_id: uuid.UUID, wrapped: bytes | None) -> bytes:
        """The participant's data key; DataKeyDestroyedError once it (or its KEK) is gone."""
        if wrapped is None:
            raise DataKeyDestroyedError("this participant withdrew; their data no longer exists")
        version = wrapped_version(wrapped)
        if version == 0:
            return unwrap_key(self._legacy_kek, wrapped, participant_id)
        data_key = self.store.unwrap(version, wrapped[5:], wrap_context(participant_id, wrapped[:5]))
        if data_key is None:
            raise DataKeyDestroyedError("this data key's key-encryption key was destroyed")
        return data_key

    def cipher(self, participant_id: uuid.UUID, wrapped: bytes | None) -> Cipher:
        """The cipher of a participant whose wrapped key is ``wrapped``."""
        return Cipher(participant_id, self.data_key(participant_id, wrapped))

    def rewrap(self, participant_id: uuid.UUID, wrapped: bytes, version: int) -> bytes:
        """The same data key wrapped under KEK ``version`` instead."""
        return self._wrap(participant_id, self.data_key(participant_id, wrapped), version)

    def _wrap(self, participant_id: uuid.UUID, data_key: bytes, version: int) -> bytes:
        header = wrap_header(version)
        return header + self.store.wrap(version, data_key, wrap_context(participant_id, header))
