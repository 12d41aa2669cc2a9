"""Signed tree heads as C2SP signed notes: the checkpoint format, Ed25519 note signatures, witness
cosignatures, and verifier keys ("vkeys").

A checkpoint (c2sp.org/tlog-checkpoint) is a note whose text is the log's origin, its tree size and
its base64 root hash, one a line; signature lines follow a blank line: ``— <key name>
base64(key ID || signature)``. The bank signs with type 0x01 (Ed25519 over the text); a witness
cosigns with type 0x04 (c2sp.org/tlog-cosignature: Ed25519 over "cosignature/v1", a time line and the
text, the time carried in the signature). Speaking the common format means any tlog tool, and any
witness that speaks it, can check the bank's heads without knowing the bank.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ED25519 = 0x01  # a log's note signature
COSIGNATURE = 0x04  # a witness's timestamped cosignature
DASH = "\u2014"  # the em dash every signature line starts with
MAX_SIGNATURES = 32  # the spec asks verifiers to accept at least 16


class NoteError(ValueError):
    """Text that is not a well-formed note, checkpoint or verifier key."""


def b64(data: bytes) -> str:
    """Standard base64 (RFC 4648 section 4), as every line of these formats uses."""
    return base64.b64encode(data).decode()


def signature_line(name: str, raw: bytes) -> str:
    """One signature line of a note: em dash, key name, base64(key ID || signature), newline."""
    return f"{DASH} {name} {b64(raw)}\n"


def raw_public(key: Ed25519PublicKey) -> bytes:
    """The 32 bytes of an Ed25519 public key."""
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_hash(name: str, kind: int, key: Ed25519PublicKey) -> bytes:
    """The 4-byte key ID: SHA-256(name || newline || type || public key)[:4]."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + raw_public(key)).digest()[:4]


def check_name(name: str) -> str:
    """A key name or origin: non-empty, no spaces, no plus (the signed-note rules)."""
    if not name or any(c.isspace() or c == "+" for c in name):
        raise NoteError(f"{name!r} cannot name a key or a log: it must be non-empty, without spaces or '+'")
    return name


@dataclass(frozen=True)
class Verifier:
    """A public key under a name, for one signature type (a note signer or a cosigner)."""

    name: str
    kind: int
    key: Ed25519PublicKey

    @property
    def key_id(self) -> bytes:
        return key_hash(self.name, self.kind, self.key)

    def vkey(self) -> str:
        """The verifier key as text: ``name+hex key ID+base64(type || public key)``."""
        encoded = base64.b64encode(bytes([self.kind]) + raw_public(self.key)).decode()
        return f"{self.name}+{self.key_id.hex()}+{encoded}"

    @classmethod
    def parse(cls, text: str) -> Verifier:
        """Read a vkey back (type 0x01 or 0x04, Ed25519), checking its key ID."""
        try:
            name, hex_id, encoded = text.strip().split("+", 2)  # base64 may hold "+" itself
            material = base64.b64decode(encoded, validate=True)
            kind, key = material[0], Ed25519PublicKey.from_public_bytes(material[1:])
        except (ValueError, IndexError, binascii.Error) as exc:
            raise NoteError(f"{text!r} is not an Ed25519 verifier key (name+id+key)") from exc
        if kind not in (ED25519, COSIGNATURE):
            raise NoteError(f"verifier key {name}: signature type {kind:#04x} is neither 0x01 nor 0x04")
        verifier = cls(check_name(name), kind, key)
        if verifier.key_id.hex() != hex_id.lower():
            raise NoteError(f"verifier key {name}: its key ID does not match its key")
        return verifier


@dataclass(frozen=True)
class Note:
    """A note's text (ending in a newline) and its signature lines as (key name, raw bytes)."""

    text: str
    signatures: tuple[tuple[str, bytes], ...] = field(default=())

    @classmethod
    def parse(cls, note: str) -> Note:
        """Split a signed note into its text and signatures (the text ends at the last blank line)."""
        if any(ord(c) < 0x20 and c != "\n" for c in note):
            raise NoteError("a note holds no control characters but newlines")
        cut = note.rfind("\n\n")
        if cut < 0 or not note.endswith("\n"):
            raise NoteError("a note is its text, a blank line, then signature lines")
        text, lines = note[: cut + 1], note[cut + 2 :].splitlines()
        if not lines or len(lines) > MAX_SIGNATURES:
            raise NoteError(f"a note carries 1 to {MAX_SIGNATURES} signatures")
        signatures = []
        for line in lines:
            parts = line.split(" ")
            if len(parts) != 3 or parts[0] != DASH:
                raise NoteError(f"{line!r} is not a signature line")
            try:
                raw = base64.b64decode(parts[2], validate=True)
            except binascii.Error as exc:
                raise NoteError(f"the signature of {parts[1]} is not base64") from exc
            if len(raw) < 5:
                raise NoteError(f"the signature of {parts[1]} is too short")
            signatures.append((check_name(parts[1]), raw))
        return cls(text, tuple(signatures))

    def render(self) -> str:
        """The note as text: its text, a blank line, a line per signature."""
        lines = "".join(signature_line(name, raw) for name, raw in self.signatures)
        return f"{self.text}\n{lines}"

    def with_signatures(self, lines: str) -> Note:
        """This note with more signature lines (a witness's answer), duplicates dropped."""
        extra = Note.parse(self.text + "\n" + lines).signatures
        return Note(self.text, self.signatures + tuple(s for s in extra if s not in self.signatures))

    def signed_by(self, verifier: Verifier) -> bool:
        """Whether a signature line under this key's name and ID is a valid note signature (type 0x01)."""
        return any(_valid(verifier.key, raw[4:], self.text.encode()) for raw in self._lines(verifier, ED25519))

    def cosigned_at(self, verifier: Verifier) -> int | None:
        """The time (POSIX seconds) of this witness's valid cosignature, or None."""
        for raw in self._lines(verifier, COSIGNATURE):
            if len(raw) != 4 + 8 + 64:
                continue
            (timestamp,) = struct.unpack(">Q", raw[4:12])
            if _valid(verifier.key, raw[12:], cosigned_message(self.text, timestamp)):
                return timestamp
        return None

    def _lines(self, verifier: Verifier, kind: int) -> list[bytes]:
        if verifier.kind != kind:
            return []
        return [raw for name, raw in self.signatures if name == verifier.name and raw[:4] == verifier.key_id]


def _valid(key: Ed25519PublicKey, signature: bytes, message: bytes) -> bool:
    try:
        key.verify(signature, message)
    except InvalidSignature:
        return False
    return True


def cosigned_message(text: str, timestamp: int) -> bytes:
    """What a witness signs: the header line, the time line, and the checkpoint's text."""
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


def sign(text: str, name: str, key: Ed25519PrivateKey) -> Note:
    """A note of ``text`` signed by ``key`` under ``name`` (type 0x01)."""
    key_id = key_hash(name, ED25519, key.public_key())
    return Note(text, ((name, key_id + key.sign(text.encode())),))


def cosign(text: str, name: str, key: Ed25519PrivateKey, timestamp: int) -> str:
    """A witness's cosignature line over a checkpoint's text, at ``timestamp``."""
    key_id = key_hash(name, COSIGNATURE, key.public_key())
    raw = key_id + struct.pack(">Q", timestamp) + key.sign(cosigned_message(text, timestamp))
    return signature_line(name, raw)


@dataclass(frozen=True)
class TreeHead:
    """The three lines of a checkpoint: which log, how many leaves, which root."""

    origin: str
    size: int
    root: bytes

    def text(self) -> str:
        """The checkpoint's note text."""
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n"

    @classmethod
    def parse(cls, text: str) -> TreeHead:
        """Read a checkpoint's text (extension lines are allowed and ignored, as the spec says)."""
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "" or any(not line for line in lines[:-1]):
            raise NoteError("a checkpoint's text is at least three non-empty lines")
        origin, size, root = lines[0], lines[1], lines[2]
        if not size.isdigit() or (size.startswith("0") and size != "0"):
            raise NoteError(f"{size!r} is not a tree size")
        try:
            digest = base64.b64decode(root, validate=True)
        except binascii.Error as exc:
            raise NoteError("the root hash is not base64") from exc
        if len(digest) != 32:
            raise NoteError("the root hash is not 32 bytes")
        return cls(check_name(origin), int(size), digest)
