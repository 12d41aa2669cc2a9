"""The withdrawal ledger: every withdrawal, kept outside the database, so that no restore undoes one.

A database backup taken before a withdrawal holds the person's rows (pseudonym, agents, release
membership). Their data key is destroyed, but restoring the backup would bring the rows back, and with
them the person in counts and lists. So each withdrawal is also written here, beside the audit
checkpoints and out of reach of whoever restores the database, and ``restoring`` re-applies every
entry after a restore.

A withdrawal rotates the keyring: the key-encryption key a backup's wrapped data keys need is
destroyed. So each entry also carries the rotation's outcome, every remaining participant's data key
wrapped under the new key-encryption key (useless without it, and never the withdrawn person's), and a
restore gives each restored participant the newest of them the keyring can still open.

One JSON object a line, appended and fsynced, never rewritten. Each entry names the previous line's
SHA-256 and is signed with the bank's audit signing key, so an entry edited, removed or reordered is
found (``read``), and a restore refuses a ledger that does not check. The entry is written before the
withdrawal's transaction commits: a withdrawal whose commit then failed is still re-applied at a
restore, which only does sooner what the person asked.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature

from agentbank.audit.signing_keys import AuditSigner
from agentbank.audit.trust import TrustedKeys
from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings
from agentbank.keys.rotation import Rotation

GENESIS = "0" * 64  # the "previous line" of the first entry


def ledger_message(body: dict[str, Any]) -> bytes:
    """What an entry's signature covers: the entry without its signature, as canonical JSON."""
    return b"agentbank-withdrawal-ledger\n" + json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def line_hash(line: str) -> str:
    """The SHA-256 of one ledger line (without its newline), as the next entry names it."""
    return hashlib.sha256(line.encode()).hexdigest()


@dataclass(frozen=True)
class LedgerEntry:
    """One withdrawal as the ledger keeps it."""

    number: int  # 1, 2, ... in the order written
    participant_id: uuid.UUID
    withdrawn_at: datetime
    keyring_version: int  # the key-encryption key the rotation made
    wrapped: dict[uuid.UUID, bytes]  # every other participant's data key under it
    hash: str  # this entry's line hash


@dataclass(frozen=True)
class LedgerRead:
    """What the ledger holds, and what is wrong with it (nothing, when it checks)."""

    entries: list[LedgerEntry]
    problems: list[str]

    @property
    def head(self) -> str:
        """The hash of the newest entry (``GENESIS`` when empty)."""
        return self.entries[-1].hash if self.entries else GENESIS


class WithdrawalLedger:
    """The append-only, signed file of withdrawals (``Settings.withdrawal_ledger_path``)."""

    def __init__(self, path: Path, signer: AuditSigner) -> None:
        self.path = path
        self.signer = signer

    @classmethod
    def of(cls, settings: Settings, signer: AuditSigner) -> WithdrawalLedger:
        """The bank's own ledger, beside its outside checkpoints."""
        return cls(settings.withdrawal_ledger_path, signer)

    def append(self, participant_id: uuid.UUID, rotation: Rotation) -> None:
        """Write one withdrawal durably (fsync) before returning, chained to the line before it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # the previous line is read and the next written as one step
            with open(fd, closefd=False, encoding="utf-8") as current:
                lines = [line for line in current.read().splitlines() if line.strip()]
            body = {
                "n": len(lines) + 1, "prev": line_hash(lines[-1]) if lines else GENESIS,
                "participant_id": str(participant_id), "withdrawn_at": datetime.now(UTC).isoformat(),
                "keyring_version": rotation.version, "key_id": self.signer.key_id,
                "wrapped": {str(p): base64.b64encode(w).decode() for p, w in sorted(rotation.wrapped.items())},
            }  # fmt: skip
            entry = {**body, "signature": self.signer.sign(ledger_message(body)).hex()}
            os.write(fd, (json.dumps(entry, sort_keys=True, separators=(",", ":")) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)


def read_ledger(path: Path, keys: TrustedKeys) -> LedgerRead:
    """Every entry of the ledger at ``path`` (none if absent), each checked: its signature under a trusted
    key, its number, and the previous line's hash; a problem for each one that fails."""
    if not path.exists():
        return LedgerRead([], [])
    entries: list[LedgerEntry] = []
    problems: list[str] = []
    previous = GENESIS
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for number, line in enumerate(lines, 1):
        try:
            entry = _entry(json.loads(line), number, previous, keys, line_hash(line))
        except (ValueError, KeyError, TypeError) as exc:
            problems.append(f"{path}, line {number}: {exc}")
        else:
            entries.append(entry)
        previous = line_hash(line)
    return LedgerRead(entries, problems)


def _entry(data: dict[str, Any], number: int, previous: str, keys: TrustedKeys, digest: str) -> LedgerEntry:
    body = {k: v for k, v in data.items() if k != "signature"}
    key = keys.key_named(str(data["key_id"]))
    if key is None:
        raise ValueError(f"signed with {data['key_id']}, which is not a key of this bank")
    try:
        key.verify(bytes.fromhex(data["signature"]), ledger_message(body))
    except InvalidSignature:
        raise ValueError("its signature does not verify: the entry was edited") from None
    if data["n"] != number or data["prev"] != previous:
        raise ValueError("it does not follow the line before it: an entry was removed, added or moved")
    return LedgerEntry(
        number, uuid.UUID(data["participant_id"]), datetime.fromisoformat(data["withdrawn_at"]),
        int(data["keyring_version"]), {uuid.UUID(p): base64.b64decode(w) for p, w in data["wrapped"].items()}, digest,
    )  # fmt: skip


def checked(read: LedgerRead, path: Path) -> list[LedgerEntry]:
    """The entries of a ledger that checks; a ConfigurationError naming what is wrong otherwise."""
    if read.problems:
        raise ConfigurationError(
            f"the withdrawal ledger {path} does not check: {'; '.join(read.problems)}",
            hint="restore the ledger from a copy kept elsewhere: without it a restore could bring a withdrawn "
            "person back",
        )
    return read.entries
