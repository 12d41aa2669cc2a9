"""AES-256-GCM with a random nonce: what seals participants' data and, in a file keyring, wraps their keys."""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from agentbank.core.errors import AgentBankError

NONCE_BYTES = 12


class DecryptionError(AgentBankError):
    """Ciphertext could not be decrypted: wrong key, tampered data, or a destroyed key."""

    code = "decryption_failed"
    status_code = 500


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
