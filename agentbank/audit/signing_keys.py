"""The key that signs audit checkpoints, and where it comes from.

A checkpoint is only worth something if nobody but the bank can sign one. A key derived from a
placeholder secret (``change-me``) can be derived by anyone who reads this code, so with a
placeholder the bank signs with a random key kept in a file of its own (mode 0600) instead. Outside
development the settings refuse placeholders, so there the key comes from a key file or from a real
secret. Every checkpoint names its key by fingerprint, so one signed by any other key is refused.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from agentbank.audit import notes
from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings

DEFAULT_ORIGIN = "agentbank.invalid/audit"  # the setting's default; a real bank names itself (its host)


def key_id(public_key: Ed25519PublicKey) -> str:
    """A short fingerprint of a public key: the first 16 hex digits of sha256 over its raw bytes."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


class AuditSigner:
    """Signs checkpoint statements with one Ed25519 key, and tree heads as notes under the log's origin."""

    def __init__(self, private_key: Ed25519PrivateKey, origin: str = DEFAULT_ORIGIN) -> None:
        self._key = private_key
        self.public_key = private_key.public_key()
        self.key_id = key_id(self.public_key)
        self.origin = notes.check_name(origin)

    @classmethod
    def from_secret(cls, secret: str, origin: str = DEFAULT_ORIGIN) -> AuditSigner:
        """The key derived from a real secret, the same on every server that shares the secret."""
        seed = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"agentbank/audit/v1", info=b"checkpoints").derive(
            secret.encode()
        )
        return cls(Ed25519PrivateKey.from_private_bytes(seed), origin)

    def sign(self, message: bytes) -> bytes:
        """The signature of a checkpoint statement."""
        return self._key.sign(message)

    def sign_note(self, text: str) -> notes.Note:
        """A checkpoint's text signed as a note, under the log's origin as key name (as the spec advises)."""
        return notes.sign(text, self.origin, self._key)

    @property
    def verifier(self) -> notes.Verifier:
        """The key as a note verifier: what a witness or a client is configured with."""
        return notes.Verifier(self.origin, notes.ED25519, self.public_key)

    def public_pem(self) -> str:
        """The public key, for anyone who wants to check a checkpoint."""
        return self.public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode()


# Key files as last read, by path: processes load the signer on each use (cheaply, from here) so a
# rotated key file is followed without a restart.
_LOADED: dict[Path, tuple[tuple[int, int, int], Ed25519PrivateKey]] = {}


def default_key_path(settings: Settings) -> Path:
    """Where the development key is kept when no key file is configured."""
    return settings.data_dir / "audit-signing-key.pem"


def load_signer(settings: Settings) -> AuditSigner:
    """The bank's checkpoint signer: a configured key file, a kept development key, or the real secret.

    Order matters for stability: a key file that already exists keeps signing even after a real
    secret is set, so checkpoints signed earlier stay valid under the same key.
    """
    if settings.audit_signing_key_file is not None:
        path = settings.audit_signing_key_file
        if not path.exists() and settings.environment != "development":
            raise ConfigurationError(
                f"AGENTBANK_AUDIT_SIGNING_KEY_FILE names no file ({path})",
                hint=f"make one with `openssl genpkey -algorithm ed25519 -out {path}` and `chmod 600` it",
            )
        return AuditSigner(_load_or_create(path), settings.audit_origin)
    path = default_key_path(settings)
    if path.exists() or settings.has_placeholder_secret:
        return AuditSigner(_load_or_create(path), settings.audit_origin)
    return AuditSigner.from_secret(settings.secret_key.get_secret_value(), settings.audit_origin)


def _load_or_create(path: Path) -> Ed25519PrivateKey:
    try:
        stat = path.stat()
        cached = _LOADED.get(path)
        if cached is not None and cached[0] == (stat.st_mtime_ns, stat.st_size, stat.st_ino):
            return cached[1]
        pem = path.read_bytes()
    except FileNotFoundError:
        return _create(path)
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigurationError(f"{path} holds a key that is not Ed25519", hint="audit checkpoints are Ed25519")
    _LOADED[path] = ((stat.st_mtime_ns, stat.st_size, stat.st_ino), key)
    return key


def _create(path: Path) -> Ed25519PrivateKey:
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole under another name, then linked into place: a process starting at the same time
    # either links first or reads the finished file, never half of one.
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
        out.flush()
        os.fsync(out.fileno())
    try:
        os.link(partial, path)
    except FileExistsError:
        return _load_or_create(path)
    finally:
        partial.unlink()
    return key
