"""Where the bank's key-encryption keys (KEKs) live: a versioned keyring kept outside the database.

Participants' data keys are stored in the database wrapped by a KEK. PostgreSQL never really forgets
a row (dead tuples, the write-ahead log, replicas, backups), so destroying a participant's wrapped
key there is not enough: withdrawal instead makes a new KEK version, re-wraps every remaining data
key under it and destroys the old version *here*, where deleting means gone. Old wrapped keys left
anywhere in the database's files then open nothing.

A store wraps and unwraps data keys itself, and never hands a KEK out: so a store in a token
(``hsm.Pkcs11KeyStore``, which keeps each KEK as a token object) works through the same interface.
``FileKeyStore``, the default, keeps the keyring in one small file, each KEK sealed by a key derived
from the bank's secret, replaced atomically (write, fsync, rename) so a destroyed version is in no
file. ``stores`` picks one by the setting ``AGENTBANK_KEY_STORE``.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from agentbank.core.errors import ConfigurationError
from agentbank.keys.aead import decrypt, encrypt


class KeyStore(Protocol):
    """A versioned set of KEKs: the newest wraps new data keys; destroyed versions are gone for good."""

    def current_version(self) -> int:
        """The newest version, making version 1 if the keyring is empty."""
        ...

    def wrap(self, version: int, data_key: bytes, context: bytes) -> bytes:
        """``data_key`` encrypted under KEK ``version`` (AES-256-GCM: nonce, ciphertext and tag), ``context``
        authenticated with it; raises KeyError if the version does not exist."""
        ...

    def unwrap(self, version: int, blob: bytes, context: bytes) -> bytes | None:
        """The data key ``wrap`` gave ``blob`` for; None if the version was destroyed (or never existed).
        Raises DecryptionError when the blob or its context were changed."""
        ...

    def add_version(self) -> int:
        """Make a new random KEK, newer than every existing one; returns its version."""
        ...

    def destroy(self, versions: set[int]) -> None:
        """Destroy these versions (the current one included, if asked)."""
        ...

    def versions(self) -> list[int]:
        """Every version that still exists, oldest first."""
        ...


class LocalKeys:
    """Wrapping and unwrapping in this process, for stores that hold their KEKs here (``current``, ``get``)."""

    def current(self) -> tuple[int, bytes]:
        """The newest version and its KEK, making version 1 if the keyring is empty."""
        raise NotImplementedError

    def get(self, version: int) -> bytes | None:
        """The KEK of ``version``, or None if it was destroyed (or never existed)."""
        raise NotImplementedError

    def current_version(self) -> int:
        return self.current()[0]

    def wrap(self, version: int, data_key: bytes, context: bytes) -> bytes:
        kek = self.get(version)
        if kek is None:
            raise KeyError(f"KEK version {version} does not exist")
        return encrypt(kek, data_key, context)

    def unwrap(self, version: int, blob: bytes, context: bytes) -> bytes | None:
        kek = self.get(version)
        return None if kek is None else decrypt(kek, blob, context)


class MemoryKeyStore(LocalKeys):
    """A keyring in this process's memory only: for tests and throwaway banks."""

    def __init__(self) -> None:
        self._keys: dict[int, bytes] = {}
        self._lock = threading.Lock()

    def current(self) -> tuple[int, bytes]:
        with self._lock:
            if not self._keys:
                self._keys[1] = AESGCM.generate_key(bit_length=256)
            version = max(self._keys)
            return version, self._keys[version]

    def get(self, version: int) -> bytes | None:
        return self._keys.get(version)

    def add_version(self) -> int:
        with self._lock:
            version = max(self._keys, default=0) + 1
            self._keys[version] = AESGCM.generate_key(bit_length=256)
            return version

    def destroy(self, versions: set[int]) -> None:
        with self._lock:
            for version in versions:
                self._keys.pop(version, None)

    def versions(self) -> list[int]:
        return sorted(self._keys)


class FileKeyStore(LocalKeys):
    """The keyring as one JSON file of sealed KEKs, changed under an exclusive file lock."""

    def __init__(self, path: Path, secret: str) -> None:
        self.path = path
        self._seal = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"agentbank/keyring/v1", info=b"seal keks").derive(
            secret.encode()
        )
        # Decrypted KEKs, keyed by the file's identity: any change to the file (another process
        # rotated) is seen on the next read, so a destroyed version is not kept alive in memory.
        self._cache: tuple[tuple[int, int], dict[int, bytes]] | None = None

    def current(self) -> tuple[int, bytes]:
        keys = self._read()
        if not keys:
            with self._locked():
                keys = self._read()
                if not keys:
                    keys = {1: AESGCM.generate_key(bit_length=256)}
                    self._write(keys)
        version = max(keys)
        return version, keys[version]

    def get(self, version: int) -> bytes | None:
        return self._read().get(version)

    def add_version(self) -> int:
        with self._locked():
            keys = self._read()
            version = max(keys, default=0) + 1
            keys[version] = AESGCM.generate_key(bit_length=256)
            self._write(keys)
            return version

    def destroy(self, versions: set[int]) -> None:
        with self._locked():
            keys = self._read()
            if versions & set(keys):
                self._write({v: k for v, k in keys.items() if v not in versions})

    def versions(self) -> list[int]:
        return sorted(self._read())

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _read(self) -> dict[int, bytes]:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return {}
        identity = (stat.st_ino, stat.st_mtime_ns)
        if self._cache is not None and self._cache[0] == identity:
            return dict(self._cache[1])
        try:
            sealed = json.loads(self.path.read_text())["keys"]
            keys = {int(v): self._open(int(v), base64.b64decode(blob)) for v, blob in sealed.items()}
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(
                f"the keyring {self.path} cannot be read with this AGENTBANK_SECRET_KEY",
                hint="set the secret the keyring was made with; without it no participant's data can be read",
            ) from exc
        self._cache = (identity, keys)
        return dict(keys)

    def _write(self, keys: dict[int, bytes]) -> None:
        body = json.dumps({"keys": {str(v): base64.b64encode(self._sealed(v, k)).decode() for v, k in keys.items()}})
        temporary = self.path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(body)
            out.flush()
            os.fsync(out.fileno())
        # The rename replaces the old file whole: no version destroyed here survives in any file.
        os.replace(temporary, self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        self._cache = None

    def _sealed(self, version: int, kek: bytes) -> bytes:
        nonce = os.urandom(12)
        return nonce + AESGCM(self._seal).encrypt(nonce, kek, b"kek:%d" % version)

    def _open(self, version: int, blob: bytes) -> bytes:
        try:
            return AESGCM(self._seal).decrypt(blob[:12], blob[12:], b"kek:%d" % version)
        except InvalidTag as exc:
            raise ValueError("sealed key does not open") from exc
