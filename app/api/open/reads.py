"""Reads of a release served like the immutable files they are: a strong ETag per release and request, and
the encoded body kept per process, so a repeated read is neither rebuilt nor re-encoded.

A release never changes once cut, and every figure of a table (its noise included) is fixed with it; so the
body of a request is a function of the release and the request alone, never of who asks. Nothing here
decides who may read: the route checks the token's scope before, and audits every read, a 304 included.
Bodies are kept ``private``: a shared cache in front of the bank must not serve one client's read to
another (each read is a use the audit log records), and ``no-cache`` makes a browser revalidate (a
cheap 304) rather than trust a copy past the next release.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

CACHE_CONTROL = "private, no-cache"
MAX_ENTRIES = 4096  # a few MiB: a table's body is a few kB


@dataclass(frozen=True)
class ReadKey:
    """What decides a read's body: the release, the table and the format."""

    release: int
    digest: str  # the release's own digest: a release id of another database is another release
    instrument: str
    item: str
    breakdowns: tuple[str, ...]
    format: str

    @property
    def etag(self) -> str:
        """A strong validator: the same release and request always give the same bytes."""
        request = "\0".join([self.digest, self.instrument, self.item, ",".join(self.breakdowns), self.format])
        return f'"{self.release}-{hashlib.sha256(request.encode()).hexdigest()[:20]}"'

    def matches(self, if_none_match: str | None) -> bool:
        """Whether an ``If-None-Match`` header names this read's ETag (or ``*``)."""
        if not if_none_match:
            return False
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return self.etag in tags or "*" in tags


@dataclass(frozen=True)
class ReadRequest:
    """A read as it arrives, before it is checked: the path's instrument and item, the query's breakdowns
    and format as sent. A kept read answers the same request again without the framework (``kept``)."""

    instrument: str
    item: str
    breakdowns: str
    format: str


@dataclass(frozen=True)
class Encoded:
    body: bytes
    media_type: str


class EncodedReads:
    """The encoded bodies of recent reads, least recently used first out; safe across request threads."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._entries: OrderedDict[ReadKey, Encoded] = OrderedDict()
        self._served: OrderedDict[ReadRequest, ReadKey] = OrderedDict()  # what each request was last served as
        self._max = max_entries
        self._lock = threading.Lock()

    def get(self, key: ReadKey) -> Encoded | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: ReadKey, encoded: Encoded) -> None:
        with self._lock:
            _keep(self._entries, key, encoded, self._max)

    def served(self, request: ReadRequest, key: ReadKey) -> None:
        """Remember that ``request``, checked and audited by the route, was served as ``key``."""
        with self._lock:
            _keep(self._served, request, key, self._max)

    def last_served(self, request: ReadRequest) -> tuple[ReadKey, Encoded] | None:
        """The key ``request`` was last served as and its body, while both are kept."""
        with self._lock:
            key = self._served.get(request)
            found = None if key is None else self._entries.get(key)
            return None if key is None or found is None else (key, found)


def _keep(entries: OrderedDict[Any, Any], key: Any, value: Any, limit: int) -> None:
    """Put ``key`` last (most recently used) and drop the least recently used beyond ``limit``."""
    entries[key] = value
    entries.move_to_end(key)
    while len(entries) > limit:
        entries.popitem(last=False)


READS = EncodedReads()
