"""The key-encryption keys in a PKCS#11 token (an HSM, a cloud HSM, SoftHSM): they never leave it.

Each KEK version is an AES-256 secret-key object generated inside the token, stored on it, sensitive
and not extractable, labelled ``agentbank-kek:<database>:<version>``. Wrapping and unwrapping a data
key are AES-GCM encryptions and decryptions the token performs (C_Encrypt, C_Decrypt with CKM_AES_GCM),
with the same nonce, ciphertext and tag layout and the same authenticated context as a file keyring.
Destroying a version destroys the token object (C_DestroyObject): what the token keeps of it is then
the token's to erase, as an HSM does.

Through python-pkcs11 (a maintained binding, with wheels), one session per process and token, logged in
as the token's user (PKCS#11 logs a whole process in at once), shared by the stores of every database;
calls are serialized (a session serves one thread at a time). A forked process opens its own session on
first use. Versions are listed on each call, never cached, so a version
another process destroyed is seen at once.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pkcs11
from pkcs11 import Attribute, KeyType, Mechanism, ObjectClass
from pkcs11.exceptions import NoSuchToken, ObjectHandleInvalid, PinIncorrect, PKCS11Error
from pkcs11.mechanisms import GCMParams

from agentbank.core.errors import ConfigurationError
from agentbank.keys.aead import NONCE_BYTES, DecryptionError

LABEL = "agentbank-kek"
TAG_BITS = 128

# The library is loaded (and C_Initialize called) once per module path; a forked process initializes it
# again (PKCS#11 asks as much of a child, whose copy of the parent's login state is not its own). Each
# token has one session per process, with the lock its users take.
_LIBRARIES: dict[str, tuple[int, Any]] = {}
_SESSIONS: dict[tuple[int, str, str], tuple[Any, threading.RLock]] = {}
_OPENING = threading.Lock()


def _library(module: Path) -> Any:
    loaded = _LIBRARIES.get(str(module))
    try:
        if loaded is None:
            loaded = (os.getpid(), pkcs11.lib(str(module)))
        elif loaded[0] != os.getpid():
            loaded[1].reinitialize()
            loaded = (os.getpid(), loaded[1])
    except (OSError, RuntimeError, PKCS11Error) as exc:
        raise ConfigurationError(
            f"the PKCS#11 module {module} cannot be loaded ({type(exc).__name__})",
            hint="set AGENTBANK_PKCS11_MODULE to the token's PKCS#11 library (.so)",
        ) from exc
    _LIBRARIES[str(module)] = loaded
    return loaded[1]


def _session(module: Path, label: str, pin: str) -> tuple[Any, threading.RLock]:
    """This process's session on the token, logged in, and its lock."""
    key = (os.getpid(), str(module), label)
    with _OPENING:
        if key not in _SESSIONS:
            try:
                token = _library(module).get_token(token_label=label)
                _SESSIONS[key] = (token.open(user_pin=pin, rw=True), threading.RLock())
            except NoSuchToken as exc:
                raise ConfigurationError(
                    f"no PKCS#11 token labelled {label!r} in {module}",
                    hint="set AGENTBANK_PKCS11_TOKEN_LABEL to the label the token was initialized with",
                ) from exc
            except PinIncorrect as exc:
                raise ConfigurationError("the PKCS#11 token refused AGENTBANK_PKCS11_PIN") from exc
        return _SESSIONS[key]


class Pkcs11KeyStore:
    """The KEKs of one database as objects of a PKCS#11 token."""

    def __init__(self, module: Path, token_label: str, pin: str, database: str) -> None:
        self.module = module
        self.token_label = token_label
        self._pin = pin
        self.prefix = f"{LABEL}:{database}:"

    def current_version(self) -> int:
        with self._lock():
            versions = self._objects()
            return max(versions) if versions else self._generate(1)

    def wrap(self, version: int, data_key: bytes, context: bytes) -> bytes:
        with self._lock():
            keys = self._objects().get(version)
            if not keys:
                raise KeyError(f"KEK version {version} does not exist")
            nonce = os.urandom(NONCE_BYTES)
            params = GCMParams(nonce, context, TAG_BITS)
            sealed = keys[0].encrypt(data_key, mechanism=Mechanism.AES_GCM, mechanism_param=params)
            return nonce + bytes(sealed)

    def unwrap(self, version: int, blob: bytes, context: bytes) -> bytes | None:
        with self._lock():
            keys = self._objects().get(version)
            if not keys:
                return None
            params = GCMParams(blob[:NONCE_BYTES], context, TAG_BITS)
            # Two processes that found the token empty at once may each have made a version 1: try both.
            for key in keys:
                try:
                    return bytes(key.decrypt(blob[NONCE_BYTES:], mechanism=Mechanism.AES_GCM, mechanism_param=params))
                except ObjectHandleInvalid:  # destroyed by another process since it was listed
                    continue
                except PKCS11Error:  # tokens report a failed tag check in several ways
                    continue
            if not self._objects().get(version):
                return None
            raise DecryptionError("stored data could not be decrypted")

    def add_version(self) -> int:
        with self._lock():
            return self._generate(max(self._objects(), default=0) + 1)

    def destroy(self, versions: set[int]) -> None:
        with self._lock():
            for version, keys in self._objects().items():
                if version in versions:
                    for key in keys:
                        key.destroy()

    def versions(self) -> list[int]:
        with self._lock():
            return sorted(self._objects())

    def _generate(self, version: int) -> int:
        self._open().generate_key(
            KeyType.AES, 256, label=f"{self.prefix}{version}", store=True,
            template={Attribute.SENSITIVE: True, Attribute.EXTRACTABLE: False, Attribute.PRIVATE: True,
                      Attribute.ENCRYPT: True, Attribute.DECRYPT: True, Attribute.WRAP: False,
                      Attribute.UNWRAP: False},
        )  # fmt: skip
        return version

    def _objects(self) -> dict[int, list[Any]]:
        found: dict[int, list[Any]] = {}
        for key in self._open().get_objects({Attribute.CLASS: ObjectClass.SECRET_KEY, Attribute.KEY_TYPE: KeyType.AES}):
            label = key[Attribute.LABEL]
            if label.startswith(self.prefix) and label[len(self.prefix) :].isdigit():
                found.setdefault(int(label[len(self.prefix) :]), []).append(key)
        return found

    def _open(self) -> Any:
        return _session(self.module, self.token_label, self._pin)[0]

    def _lock(self) -> threading.RLock:
        return _session(self.module, self.token_label, self._pin)[1]
