"""The keys audit checkpoints may be signed with: the current one, and the retired ones, each handed over.

Rotating the signing key must not orphan the checkpoints witnesses already keep. So a retired key
stays trusted for what it signed until it retired, and is published beside the outside checkpoints
(``retired-keys.jsonl``, appended to, never rewritten) with the moment it retired, its successor,
and a handover: the old key's signature over "this key is succeeded by that one at that time". A
witness who trusted only the old public key can thus check the new one. A checkpoint that names a
retired key but was signed after it retired (and a short grace) is refused: that is what a stolen
old key would sign.

Rotation (``rotate_signing_key``): sign the head with the old key, record the handover, replace the
key file (the old private key is gone with it), and sign the head again with the new key, so the
boundary is covered by both. Processes load the key file on each use and follow the change.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit.checkpoints import CheckpointFile, SignedCheckpoint, publish_checkpoint
from agentbank.audit.log import Actor, record
from agentbank.audit.signing_keys import AuditSigner, default_key_path, key_id, load_signer
from agentbank.audit.tiers import Tier
from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings
from agentbank.db import transaction

# A process that loaded the old key just before a rotation may sign with it a moment later; after
# this, a checkpoint under a retired key is refused.
ROTATION_GRACE = timedelta(seconds=60)


def handover_message(old: str, new: str, retired_at: datetime) -> bytes:
    """What a retiring key signs to name its successor."""
    return f"agentbank-audit-key-rotation\n{old}\n{new}\n{retired_at.astimezone(UTC).isoformat()}".encode()


@dataclass(frozen=True)
class RetiredKey:
    """A key that signed checkpoints until ``retired_at``, and the key it handed over to."""

    public_key: Ed25519PublicKey
    retired_at: datetime
    successor: str
    handover: bytes

    @property
    def key_id(self) -> str:
        """The key's fingerprint, as checkpoints name it."""
        return key_id(self.public_key)

    def handed_over(self) -> bool:
        """Whether the handover is signed by this key."""
        try:
            self.public_key.verify(self.handover, handover_message(self.key_id, self.successor, self.retired_at))
        except InvalidSignature:
            return False
        return True

    def to_json(self) -> dict[str, Any]:
        """The published form."""
        pem = self.public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        return {"key_id": self.key_id, "public_key_pem": pem.decode(), "retired_at": self.retired_at.isoformat(),
                "successor": self.successor, "handover": self.handover.hex()}  # fmt: skip

    @classmethod
    def from_json(cls, entry: dict[str, Any]) -> RetiredKey:
        """Read a published entry back (raises ValueError, KeyError or TypeError when it is not one)."""
        key = serialization.load_pem_public_key(entry["public_key_pem"].encode())
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("not an Ed25519 key")
        retired_at = datetime.fromisoformat(entry["retired_at"])
        return cls(key, retired_at, str(entry["successor"]), bytes.fromhex(entry["handover"]))


def retired_keys_path(settings: Settings) -> Path:
    """Beside the outside checkpoints, where witnesses mirror them."""
    return settings.audit_checkpoint_path.with_name("retired-keys.jsonl")


def read_retired(settings: Settings) -> list[RetiredKey]:
    """Every retired key, oldest first; an entry that is not one, or whose handover fails, is refused."""
    path = retired_keys_path(settings)
    if not path.exists():
        return []
    keys = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            key = RetiredKey.from_json(json.loads(line))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"{path}, line {number}, is not a retired key") from exc
        if not key.handed_over():
            raise ConfigurationError(f"{path}, line {number}: the handover is not signed by the key it retires")
        keys.append(key)
    return keys


@dataclass(frozen=True)
class TrustedKeys:
    """The current key and the retired ones: which key, if any, may have signed a checkpoint."""

    current: Ed25519PublicKey
    retired: tuple[RetiredKey, ...] = ()

    @classmethod
    def of(cls, settings: Settings) -> TrustedKeys:
        """The bank's keys, as its settings and its published retired keys say."""
        return cls(load_signer(settings).public_key, tuple(read_retired(settings)))

    @property
    def key_id(self) -> str:
        """The current key's fingerprint."""
        return key_id(self.current)

    def key_named(self, fingerprint: str) -> Ed25519PublicKey | None:
        """The trusted key (current or retired) with this fingerprint, or None."""
        keys = [self.current, *(r.public_key for r in self.retired)]
        return next((k for k in keys if key_id(k) == fingerprint), None)

    def signed_late(self, point: SignedCheckpoint) -> bool:
        """Whether a retired key really signed this checkpoint, after it retired: what a stolen key signs."""
        for retired in self.retired:
            if retired.key_id == point.key_id and point.signed_at > retired.retired_at + ROTATION_GRACE:
                try:
                    retired.public_key.verify(point.signature, point.message())
                except InvalidSignature:
                    continue
                return True
        return False

    def verifies(self, point: SignedCheckpoint) -> bool:
        """Whether a trusted key, in its time, signed this checkpoint."""
        candidates = [(self.current, None)] + [(r.public_key, r.retired_at) for r in self.retired]
        for public_key, retired_at in candidates:
            if key_id(public_key) != point.key_id:
                continue
            if retired_at is not None and point.signed_at > retired_at + ROTATION_GRACE:
                continue
            try:
                public_key.verify(point.signature, point.message())
            except InvalidSignature:
                continue
            return True
        return False


def rotate_signing_key(settings: Settings, sessions: sessionmaker[Session], actor: Actor) -> tuple[str, str]:
    """Retire the signing key for a new one (see the module), audited; returns the old and the new key ids."""
    old = load_signer(settings)
    path = settings.audit_signing_key_file or default_key_path(settings)
    if not path.exists():
        raise ConfigurationError(
            "the checkpoint key is derived from AGENTBANK_SECRET_KEY and cannot be rotated on its own",
            hint="set AGENTBANK_AUDIT_SIGNING_KEY_FILE to a key file, then rotate",
        )
    outside = CheckpointFile.of(settings)
    publish_checkpoint(sessions, old, outside)  # the last checkpoint under the old key
    new_key = Ed25519PrivateKey.generate()
    new = AuditSigner(new_key)
    retired_at = datetime.now(UTC)
    handover = old.sign(handover_message(old.key_id, new.key_id, retired_at))
    # The handover is published before the old key is destroyed: a crash in between leaves the old key
    # signing (and a rotation to run again), never checkpoints that no published key verifies.
    _append(
        retired_keys_path(settings), json.dumps(RetiredKey(old.public_key, retired_at, new.key_id, handover).to_json())
    )
    _replace_key(path, new_key)
    with transaction(sessions) as session:
        record(session, actor, "audit.key_rotated", Tier.ADMIN, details={"old": old.key_id, "new": new.key_id})
    publish_checkpoint(sessions, new, outside)
    return old.key_id, new.key_id


def _append(path: Path, line: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def _replace_key(path: Path, key: Ed25519PrivateKey) -> None:
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    partial = path.with_name(f".{path.name}.{os.getpid()}.new")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, path)  # whole or not at all; the old private key is no longer kept


__all__ = ["RetiredKey", "TrustedKeys", "handover_message", "read_retired", "retired_keys_path", "rotate_signing_key"]
