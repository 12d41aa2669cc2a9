"""A backup of the bank: its database through ``pg_dump`` and its audit heads, never its keyring.

A backup is a directory: ``database.dump`` (pg_dump's custom format, the whole database), the outside
audit heads as they were (``audit-heads/``: the signed checkpoints and the retired signing keys), and
``manifest.json``, which names the withdrawal ledger's length and newest entry at the time, and the
SHA-256 of every file. The keyring is never in it: a backup that held the key-encryption keys would
keep every withdrawn person's data readable for as long as the backup lives. Restoring one needs the
keyring as it is now, and the withdrawal ledger (``restoring``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentbank.audit.trust import TrustedKeys, retired_keys_path
from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings
from agentbank.db.dumps import dump
from agentbank.participants.ledger import checked, read_ledger

FORMAT = 1
MANIFEST = "manifest.json"
DUMP = "database.dump"
HEADS = "audit-heads"


@dataclass(frozen=True)
class Manifest:
    """What a backup holds, and where the withdrawal ledger stood when it was taken."""

    created_at: datetime
    server_major: int
    ledger_entries: int
    ledger_head: str
    files: dict[str, str]  # relative path -> sha256

    def to_json(self) -> dict[str, Any]:
        """The stored form."""
        return {"format": FORMAT, "created_at": self.created_at.isoformat(), "server_major": self.server_major,
                "ledger": {"entries": self.ledger_entries, "head": self.ledger_head}, "files": self.files}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        """Read the stored form (raises ValueError, KeyError or TypeError when it is not one)."""
        if data["format"] != FORMAT:
            raise ValueError(f"backup format {data['format']} is not {FORMAT}")
        return cls(datetime.fromisoformat(data["created_at"]), int(data["server_major"]),
                   int(data["ledger"]["entries"]), str(data["ledger"]["head"]), dict(data["files"]))  # fmt: skip


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def back_up(settings: Settings, owner_url: str, destination: Path, keys: TrustedKeys) -> Manifest:
    """Write a backup of the bank into ``destination`` (a new or empty directory, made readable by its owner
    only). ``owner_url`` reaches the database as its owner, who can read every table."""
    if destination.exists() and any(destination.iterdir()):
        raise ConfigurationError(f"{destination} is not empty", hint="name a new directory for the backup")
    ledger = checked(read_ledger(settings.withdrawal_ledger_path, keys), settings.withdrawal_ledger_path)
    destination.mkdir(parents=True, exist_ok=True, mode=0o700)
    # Where the ledger stood before the dump: an entry written meanwhile is re-applied at a restore anyway.
    entries, head = len(ledger), (ledger[-1].hash if ledger else "")
    major = dump(owner_url, destination / DUMP)
    (destination / HEADS).mkdir(mode=0o700)
    for source in (settings.audit_checkpoint_path, retired_keys_path(settings)):
        if source.exists():
            shutil.copy2(source, destination / HEADS / source.name)
    files = {
        str(path.relative_to(destination)): _sha256(path) for path in sorted(destination.rglob("*")) if path.is_file()
    }
    manifest = Manifest(datetime.now(UTC), major, entries, head, files)
    written = destination / MANIFEST
    written.write_text(json.dumps(manifest.to_json(), indent=2, sort_keys=True) + "\n")
    os.chmod(written, 0o600)
    return manifest


def read_backup(source: Path) -> Manifest:
    """The manifest of the backup at ``source``, once every file it names is there with its digest."""
    try:
        manifest = Manifest.from_json(json.loads((source / MANIFEST).read_text()))
    except FileNotFoundError:
        raise ConfigurationError(f"{source} is not a backup of the bank (no {MANIFEST})") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigurationError(f"{source / MANIFEST} cannot be read: {exc}") from None
    for name, digest in manifest.files.items():
        path = source / name
        if not path.is_file() or _sha256(path) != digest:
            raise ConfigurationError(f"the backup's {name} is missing or changed since it was written")
    if DUMP not in manifest.files:
        raise ConfigurationError(f"the backup at {source} holds no database")
    return manifest
