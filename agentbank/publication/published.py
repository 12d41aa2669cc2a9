"""Reading the shelf of published releases: the current release's manifest and its files, with no database.

A read looks at ``CURRENT`` (one ``stat``, so a release published by another process is served from the
next read on), loads the manifest it names once, checks the manifest's signed digest once, and keeps the
bytes of recently read files in memory. Nothing here decides who may read: the caller checks the token.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from agentbank.audit import notes
from agentbank.core.errors import AgentBankError
from agentbank.publication.shelf import Shelf, note_text, table_key

MAX_KEPT = 4096  # files' bytes kept in memory: a table is a few kB


class ShelfError(AgentBankError):
    """The shelf holds a manifest that its signature or its files do not bear out: served nothing."""

    code = "release_files_damaged"
    status_code = 503


@dataclass(frozen=True)
class Entry:
    sha256: str
    size: int
    media_type: str
    format: str

    @property
    def etag(self) -> str:
        """A strong validator: the file's own digest."""
        return f'"{self.sha256[:32]}"'

    @property
    def location(self) -> str:
        """The file's immutable address."""
        return f"/v1/open/files/{self.sha256}.{self.format}"


@dataclass(frozen=True)
class Manifest:
    release: int
    content: dict[str, Any]
    digests: dict[tuple[str, str], dict[str, Any]]  # (sha256, format) -> the file's entry

    def entry(self, instrument: str, item: str, dims: tuple[str, ...], fmt: str) -> Entry | None:
        found = self.content["files"].get(table_key(instrument, item, dims, fmt))
        return None if found is None else Entry(found["sha256"], found["bytes"], found["media_type"], fmt)

    def items(self, instrument: str) -> list[str]:
        return list(self.content["items"].get(instrument, []))

    def holds(self, sha256: str, fmt: str) -> Entry | None:
        """The entry of a file of this release named by its digest (a file of no release in force: None)."""
        found = self.digests.get((sha256, fmt))
        return None if found is None else Entry(found["sha256"], found["bytes"], found["media_type"], fmt)


class PublishedReleases:
    """The current published release of one shelf, and its files' bytes; safe across request threads."""

    def __init__(self, shelf: Shelf, verifier: notes.Verifier | None = None) -> None:
        self.shelf = shelf
        self._verifier = verifier
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._manifest: Manifest | None = None
        self._bytes: OrderedDict[str, bytes] = OrderedDict()

    def current(self) -> Manifest | None:
        """The manifest of the release ``CURRENT`` names (None before the first publication)."""
        try:
            stat = self.shelf.current.stat()
        except FileNotFoundError:
            return None
        seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if seen == self._seen:
                return self._manifest
        release = int(self.shelf.current.read_text().strip())
        manifest = self._load(release)
        with self._lock:
            self._seen, self._manifest = seen, manifest
        return manifest

    def _load(self, release: int) -> Manifest:
        data = self.shelf.manifest(release).read_bytes()
        sha256 = hashlib.sha256(data).hexdigest()
        if self._verifier is not None:
            note = notes.Note.parse(self.shelf.note(release).read_text())
            if note.text != note_text(self._verifier.name, release, sha256) or not note.signed_by(self._verifier):
                raise ShelfError(f"release {release}'s manifest does not match its signature")
        content = json.loads(data)
        digests = {(found["sha256"], key.rsplit("/", 1)[1]): found for key, found in content["files"].items()}
        return Manifest(release, content, digests)

    def read(self, entry: Entry) -> bytes:
        """A file's bytes, checked against its digest when first read from disk."""
        with self._lock:
            kept = self._bytes.get(entry.sha256)
            if kept is not None:
                self._bytes.move_to_end(entry.sha256)
                return kept
        data = self.shelf.file(entry.sha256, entry.format).read_bytes()
        if hashlib.sha256(data).hexdigest() != entry.sha256:
            raise ShelfError(f"the file {entry.sha256[:12]} does not match its digest")
        with self._lock:
            self._bytes[entry.sha256] = data
            while len(self._bytes) > MAX_KEPT:
                self._bytes.popitem(last=False)
        return data
