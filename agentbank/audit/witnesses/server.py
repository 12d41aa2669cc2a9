"""An independent witness (c2sp.org/tlog-witness): it cosigns a log's tree head only if the head is
signed by a key it trusts for that log and extends, by a consistency proof, the head it cosigned last.

It keeps its own Ed25519 key and, per log origin, the size and root it last cosigned, in a directory
of its own; it needs nothing of the bank's (no settings, database or key), so it can run on another
machine under another operator. Checking the old size and storing the new head happen under one
exclusive lock on that directory, so two requests can never roll the stored head back (the race the
protocol warns of), and the state file is replaced whole (written aside, synced, renamed).
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from agentbank.audit import merkle, notes
from agentbank.core.errors import ConfigurationError

SIZE_TYPE = "text/x.tlog.size"  # the body of a 409: the size the witness holds
MAX_PROOF_LINES = 63


@dataclass
class Refusal(Exception):
    """Why a checkpoint is not cosigned, as the protocol's status code and body."""

    status: int
    message: str
    body: str = ""
    content_type: str = "text/plain"

    def __post_init__(self) -> None:
        super().__init__(self.message)
        self.body = self.body or self.message + "\n"


def parse_request(body: str) -> tuple[int, list[bytes], str]:
    """An add-checkpoint body: the old size, the consistency proof, the checkpoint note (400 if malformed)."""
    head, sep, note = body.partition("\n\n")
    lines = head.split("\n")
    if not sep or not lines[0].startswith("old "):
        raise Refusal(400, "the body is an old size line, proof lines, a blank line, then the checkpoint")
    size = lines[0][4:]
    if not size.isdigit() or (size.startswith("0") and size != "0"):
        raise Refusal(400, "the old size is not a decimal number")
    if len(lines) - 1 > MAX_PROOF_LINES:
        raise Refusal(400, f"a consistency proof has at most {MAX_PROOF_LINES} lines")
    try:
        proof = [base64.b64decode(line, validate=True) for line in lines[1:]]
    except binascii.Error as exc:
        raise Refusal(400, "a proof line is not base64") from exc
    return int(size), proof, note


class Witness:
    """One witness: its name and key, the logs it trusts (their note verifier keys), its state directory."""

    def __init__(self, name: str, directory: Path, logs: list[notes.Verifier]) -> None:
        self.name = notes.check_name(name)
        self.directory = directory
        self.logs = {log.name: log for log in logs}
        self.key = load_or_create_key(directory / "witness-key.pem")
        self._threads = threading.Lock()  # flock alone would not order this process's own threads

    @property
    def verifier(self) -> notes.Verifier:
        """What a log or a client is configured with to check this witness's cosignatures."""
        return notes.Verifier(self.name, notes.COSIGNATURE, self.key.public_key())

    def add_checkpoint(self, body: str, now: float | None = None) -> str:
        """Check one add-checkpoint request and return the cosignature line, or raise ``Refusal``."""
        old, proof, text = parse_request(body)
        try:
            note = notes.Note.parse(text)
            head = notes.TreeHead.parse(note.text)
        except notes.NoteError as exc:
            raise Refusal(400, f"not a checkpoint: {exc}") from exc
        log = self.logs.get(head.origin)
        if log is None:
            raise Refusal(404, f"this witness does not know the log {head.origin}")
        if not note.signed_by(log):
            raise Refusal(403, f"the checkpoint is not signed by the key this witness trusts for {head.origin}")
        if old > head.size:
            raise Refusal(400, f"the old size {old} is larger than the checkpoint's {head.size}")
        with self._locked():
            state = self._read()
            held = state.get(head.origin)
            size, root = (int(held["size"]), base64.b64decode(str(held["root"]))) if held else (0, merkle.EMPTY_ROOT)
            if old != size:
                raise Refusal(409, f"this witness last cosigned {size}, not {old}", f"{size}\n", SIZE_TYPE)
            if old == head.size and root != head.root and old != 0:
                raise Refusal(409, f"a different tree of {old} leaves was cosigned before: the log forked")
            if old != 0 and old < head.size and not merkle.verify_consistency(old, head.size, root, head.root, proof):
                raise Refusal(422, f"the proof does not show the tree of {head.size} extends the one of {old}")
            if old == 0 and proof:
                raise Refusal(422, "a proof from size 0 is empty")
            state[head.origin] = {"size": head.size, "root": base64.b64encode(head.root).decode()}
            self._write(state)
        return notes.cosign(note.text, self.name, self.key, int(now if now is not None else time.time()))

    def held(self, origin: str) -> int:
        """The size this witness last cosigned for a log (0: never)."""
        entry = self._read().get(origin)
        return int(entry["size"]) if entry else 0

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with self._threads, (self.directory / ".lock").open("a") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # other witness processes on this directory wait
            yield

    def _read(self) -> dict[str, dict[str, str | int]]:
        path = self.directory / "state.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    def _write(self, state: dict[str, dict[str, str | int]]) -> None:
        path = self.directory / "state.json"
        partial = path.with_name(f".state.{os.getpid()}.json")
        with partial.open("w", encoding="utf-8") as out:
            json.dump(state, out, sort_keys=True)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)  # the old state or the new one, never half of either
        directory = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(directory)  # the rename itself survives a power cut
        finally:
            os.close(directory)


def load_or_create_key(path: Path) -> Ed25519PrivateKey:
    """The witness's key, made on first use (mode 0600); an existing file is never replaced."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first: read theirs
        else:
            with os.fdopen(fd, "wb") as out:
                out.write(pem)
                out.flush()
                os.fsync(out.fileno())
    loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(loaded, Ed25519PrivateKey):
        raise ConfigurationError(f"{path} holds a key that is not Ed25519", hint="a witness cosigns with Ed25519")
    return loaded
