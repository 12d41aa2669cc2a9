"""Published tables answered like the static files they are: no transaction, no audit event, no framework.

A read of the distribution route, or of a file by its digest (``/v1/open/files/<sha256>.<ext>``), whose table
the current published release holds is answered here: the bearer token's principal from ``LiveTokens``
(kept in memory while the process hears of every change to tokens; a revoked one is refused at once), the
``aggregate:read`` scope, the caller's rate limit, the file's bytes with a strong ETag (its digest), or a
``304``. The read is counted in the access log (``ReadCounts``), never audited: reading a release uses no
agent (DESIGN §5); each member was told of the release once, when it was cut.

Anything else (no token or a refused one, a query it does not know, a table the release lacks, no release
yet) goes on to the route untouched, which answers it and its errors as always.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qsl

import anyio.to_thread
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from agentbank.access.live_tokens import LiveTokens
from agentbank.access.principals import AGGREGATE_READ, Principal
from agentbank.core.errors import RateLimitedError
from agentbank.publication.access_log import ReadCounts
from agentbank.publication.distributions import DIMENSIONS
from agentbank.publication.formats import FORMATS
from agentbank.publication.published import Entry, PublishedReleases, ShelfError
from app.api.errors import error_response
from app.api.limits import Limiter

DISTRIBUTION = re.compile(r"^/v1/open/instruments/([^/]+)/items/([^/]+)/distribution$")
FILE = re.compile(r"^/v1/open/files/([0-9a-f]{64})\.(json|csv|parquet|dta|sav)$")
QUERY = {"breakdowns": "", "format": "json"}  # the route's query parameters and their defaults
MAX_IF_NONE_MATCH = 400  # as the route's header parameter: a longer one is the route's to refuse
# The distribution route names the current release, so a copy is checked again (a cheap 304); a file named by
# its digest never changes. ``private``: each read is a registered client's, counted in its access log.
ROUTE_CACHE = "private, no-cache"
FILE_CACHE = "private, max-age=31536000, immutable"


@dataclass
class OpenReads:
    """What a published read needs, built with the app."""

    published: PublishedReleases
    tokens: LiveTokens
    counts: ReadCounts
    limiter: Limiter


def entry_for(published: PublishedReleases, path: str, query: dict[str, str]) -> tuple[int, Entry] | None:
    """The file a read of ``path`` asks for in the current release (None: the route decides)."""
    manifest = published.current()
    if manifest is None:
        return None
    found = FILE.match(path)
    entry: Entry | None
    if found is not None:
        entry = manifest.holds(found[1], found[2])
        return None if entry is None else (manifest.release, entry)
    match = DISTRIBUTION.match(path)
    if match is None or query["format"] not in FORMATS:
        return None
    chosen = [b.strip() for b in query["breakdowns"].split(",") if b.strip()]
    if len(set(chosen)) != len(chosen) or not set(chosen) <= set(DIMENSIONS):
        return None
    dims = tuple(d for d in DIMENSIONS if d in chosen)
    entry = manifest.entry(match[1], match[2], dims, query["format"])
    return None if entry is None else (manifest.release, entry)


def file_response(
    published: PublishedReleases, release: int, entry: Entry, if_none_match: str | None, *, by_digest: bool
) -> Response:
    """The file, or 304 when ``If-None-Match`` names it."""
    headers = {"ETag": entry.etag, "Cache-Control": FILE_CACHE if by_digest else ROUTE_CACHE,
               "Content-Location": entry.location, "X-Release": str(release)}  # fmt: skip
    tags = {tag.strip().removeprefix("W/") for tag in (if_none_match or "").split(",") if tag.strip()}
    if entry.etag in tags or "*" in tags:
        return Response(status_code=304, headers=headers)
    return Response(published.read(entry), media_type=entry.media_type, headers=headers)


class PublishedReads:
    """Answer a read of a published table; pass everything else to ``app``."""

    def __init__(self, app: ASGIApp, *, reads: Callable[[], OpenReads]) -> None:
        self.app, self.reads = app, reads

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = _read(scope) if scope["type"] == "http" and scope["method"] in ("GET", "HEAD") else None
        if found is None:
            await self.app(scope, receive, send)
            return
        query, token, if_none_match = found
        reads = self.reads()
        found_entry = entry_for(reads.published, scope["path"], query)
        principal = None if found_entry is None else await _principal(reads.tokens, token)
        if found_entry is None or principal is None or AGGREGATE_READ not in principal.scopes:
            await self.app(scope, receive, send)  # the route answers, and says what went wrong
            return
        try:
            reads.limiter.check(principal.id)
        except RateLimitedError as exc:
            refused = error_response(
                429, RateLimitedError.code, "too many requests", {"Retry-After": str(exc.retry_after)}
            )
            await refused(scope, receive, send)
            return
        release, entry = found_entry
        by_digest = bool(FILE.match(scope["path"]))
        try:
            response = file_response(reads.published, release, entry, if_none_match, by_digest=by_digest)
        except ShelfError:  # a damaged file: the route answers with the error, never a file unchecked
            await self.app(scope, receive, send)
            return
        reads.counts.count(principal.id, not_modified=response.status_code == 304)
        await response(scope, receive, send)


async def _principal(tokens: LiveTokens, token: str) -> Principal | None:
    """The token's principal: from memory while kept, else looked up on a worker thread (a database read)."""
    return (
        await anyio.to_thread.run_sync(tokens.principal, token) if not tokens.holds(token) else tokens.principal(token)
    )


def _read(scope: Scope) -> tuple[dict[str, str], str, str | None] | None:
    """The query, bearer token and ``If-None-Match`` of a read that sends one token and only the route's own
    query parameters, each once; else None."""
    path = scope["path"]
    if not (path.startswith("/v1/open/files/") or DISTRIBUTION.match(path)):
        return None
    pairs = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names) or not set(names) <= QUERY.keys():
        return None
    token, if_none_match, bearers = "", None, 0
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            bearers += 1 if scheme.lower() == "bearer" else 2
        elif name == b"if-none-match":
            if if_none_match is not None or len(value) > MAX_IF_NONE_MATCH:
                return None
            if_none_match = value.decode("latin-1")
    if bearers != 1 or not token.strip():
        return None
    return QUERY | dict(pairs), token.strip(), if_none_match
