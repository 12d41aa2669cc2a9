"""Releases as publications: once cut, every table in every format is an immutable file, listed in a signed
manifest, and the open tier reads those files and nothing else.

Layout of the shelf (``settings.release_files_path``), which nginx or any file server can serve as it is:

- ``files/<sha256>.<ext>``: each table's bytes, named by their digest (content-addressed, so a file never
  changes and two releases with the same table share it);
- ``<release>/manifest.json``: the release, its privacy accounting, and per table and format the file's
  digest, size and media type; ``<release>/manifest.note``: its sha256 signed by the bank's log key as a
  C2SP signed note, so a copy of the shelf anywhere can be checked against the bank's public key;
- ``<release>/tables/<instrument>/<item>/<breakdowns or ->.<format>``: the same files by the table they
  hold (hard links, a pair under both its orders), so a file server maps a distribution's URL to its file
  without the bank;
- ``CURRENT``: the number of the release the open tier serves, and ``current``, a link to its directory, both
  replaced atomically once its files exist. Releases before the previous one are removed from the shelf with
  their files (as their tables leave the database): a withdrawal reaches the files at the next release too.

Publishing reads the release's stored tables (never the members), so it may run again at any time: after
the cut commits, by a worker catching up after a crash, or by an API process starting. The release's
publication is one audit event (``release.published``, with the manifest's digest); reading a published
table is no use of an agent and writes none.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session, sessionmaker

from agentbank.audit import log as audit
from agentbank.audit.signing_keys import AuditSigner
from agentbank.audit.tiers import Tier
from agentbank.db import transaction
from agentbank.db.models import Release, ReleaseTable
from agentbank.instruments.model import Instrument
from agentbank.publication.distributions import Distribution
from agentbank.publication.formats import FORMATS, encoded, item_figures
from agentbank.publication.releases import current_release, open_table

log = logging.getLogger(__name__)
PUBLISH_LOCK = 0x7075626C  # "publ"


def table_key(instrument: str, item: str, dims: tuple[str, ...] | list[str], fmt: str) -> str:
    """A table's name in a manifest: ``gss/cappun/race,sex/csv`` (``-`` for the overall table)."""
    return f"{instrument}/{item}/{','.join(dims) or '-'}/{fmt}"


@dataclass(frozen=True)
class Shelf:
    """Where a bank's published releases are kept."""

    root: Path

    @property
    def files(self) -> Path:
        return self.root / "files"

    def manifest(self, release: int) -> Path:
        return self.root / str(release) / "manifest.json"

    def note(self, release: int) -> Path:
        return self.root / str(release) / "manifest.note"

    @property
    def current(self) -> Path:
        return self.root / "CURRENT"

    def file(self, sha256: str, fmt: str) -> Path:
        return self.files / f"{sha256}.{fmt}"  # a format's name is its file's extension

    def by_table(self, release: int, key: str) -> Path:
        """Where a table's file is linked by its name in the manifest (``table_key``)."""
        instrument, item, dims, fmt = key.split("/")
        return self.root / str(release) / "tables" / instrument / item / f"{dims}.{fmt}"


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` whole or not at all (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".part-")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(temporary, 0o644)  # a file server in front reads what the bank publishes: aggregates only
    os.replace(temporary, path)


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()


def note_text(origin: str, release: int, sha256: str) -> str:
    """What the log key signs of a release: its number and its manifest's digest."""
    return f"{origin}/releases\n{release}\nsha256 {sha256}\n"


def publish(
    session: Session, release_id: int, shelf: Shelf, signer: AuditSigner, instruments: Callable[[str], Instrument],
    reference_dir: Path,
) -> str:  # fmt: skip
    """Write every table of the release in every format, its manifest and its signature; the manifest's sha256.
    Audited once per release (a second publication of the same release writes the files again, silently)."""
    release = session.get_one(Release, release_id)
    rows = session.execute(
        select(ReleaseTable.instrument, ReleaseTable.item, ReleaseTable.breakdowns)
        .where(ReleaseTable.release_id == release_id)
        .order_by(ReleaseTable.instrument, ReleaseTable.item, ReleaseTable.breakdowns)
    ).all()  # fmt: skip
    files: dict[str, dict[str, Any]] = {}
    items: dict[str, list[str]] = {}
    loaded: dict[str, Instrument] = {}
    of_item: dict[tuple[str, str], tuple[Distribution, dict[str, Any]]] = {}  # its overall table and figures
    for instrument_key, item, key in rows:
        instrument = loaded.setdefault(instrument_key, instruments(instrument_key))
        dims = [d for d in key.split(",") if d]
        if (instrument_key, item) not in of_item:
            overall = open_table(session, instrument, item, [], release_id)
            of_item[(instrument_key, item)] = overall, item_figures(session, instrument, overall, reference_dir)
        overall, figures = of_item[(instrument_key, item)]
        result = overall if not dims else open_table(session, instrument, item, dims, release_id)
        if not dims:
            items.setdefault(instrument_key, []).append(item)
        for fmt in FORMATS:
            body = encoded(result, fmt, figures)
            digest = hashlib.sha256(body.body).hexdigest()
            path = shelf.file(digest, fmt)
            if not path.exists():
                _write(path, body.body)
            key = table_key(instrument_key, item, dims, fmt)
            for order in {tuple(dims), tuple(reversed(dims))}:  # a URL may name a pair in either order
                _link(path, shelf.by_table(release.id, table_key(instrument_key, item, order, fmt)))
            files[key] = {"sha256": digest, "bytes": len(body.body), "media_type": body.media_type}
    manifest = {"release": release.id, "cut_at": release.cut_at.isoformat(), "state_digest": release.state_digest,
                "k": release.k, "mu": release.mu, "agents": release.agents, "dimensions": release.dimensions,
                "privacy": release.privacy, "items": items, "files": files}  # fmt: skip
    data = manifest_bytes(manifest)
    sha256 = hashlib.sha256(data).hexdigest()
    _write(shelf.manifest(release.id), data)
    _write(shelf.note(release.id), signer.sign_note(note_text(signer.origin, release.id, sha256)).render().encode())
    if release.manifest_sha256 is None:
        audit.record(session, audit.SYSTEM, "release.published", Tier.OPEN, details={
            "release": release.id, "manifest_sha256": sha256, "files": len(files)})  # fmt: skip
    release.manifest_sha256 = sha256
    log.info("published release %d: %d files", release.id, len(files))
    return sha256


def _link(source: Path, link: Path) -> None:
    """``link`` names the same file as ``source`` (replaced if it named another)."""
    link.parent.mkdir(parents=True, exist_ok=True)
    temporary = link.with_name(f".link-{os.getpid()}-{link.name}")
    temporary.unlink(missing_ok=True)
    os.link(source, temporary)
    os.replace(temporary, link)


def point_current(shelf: Shelf, release_id: int) -> None:
    """Serve ``release_id`` from now on (once its release is committed and its files written), then remove
    the releases before the previous one (a read that began on the previous release may still want it)."""
    _write(shelf.current, f"{release_id}\n".encode())
    temporary = shelf.root / f".current-{os.getpid()}"
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(str(release_id))
    os.replace(temporary, shelf.root / "current")
    _prune(shelf, release_id)


def _prune(shelf: Shelf, current: int) -> None:
    """Remove every release older than the one before ``current``, and the files no kept release names."""
    releases = sorted(int(p.name) for p in shelf.root.iterdir() if p.name.isdigit() and p.is_dir())
    kept = [r for r in releases if r <= current][-2:] + [r for r in releases if r > current]
    for release in releases:
        if release not in kept:
            shutil.rmtree(shelf.root / str(release), ignore_errors=True)
    named = set()
    for release in kept:
        try:
            named |= {f"{e['sha256']}.{key.rsplit('/', 1)[1]}"
                      for key, e in json.loads(shelf.manifest(release).read_bytes())["files"].items()}  # fmt: skip
        except (FileNotFoundError, ValueError, KeyError):
            return  # a release being written, or a damaged manifest: remove nothing rather than its files
    for path in shelf.files.glob("*.*") if shelf.files.is_dir() else ():
        if path.name not in named and not path.name.startswith("."):
            path.unlink(missing_ok=True)


def current_on_shelf(shelf: Shelf) -> int | None:
    """The release the shelf serves, if any."""
    try:
        return int(shelf.current.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def ensure_published(
    sessions: sessionmaker[Session], shelf: Shelf, signer: AuditSigner, instruments: Callable[[str], Instrument],
    reference_dir: Path,
) -> int | None:  # fmt: skip
    """Publish the newest release if its files are not on the shelf yet, then serve it; the release served.
    Idempotent, so any process may call it (after a cut, at start, on a schedule)."""
    with transaction(sessions) as session:
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PUBLISH_LOCK})  # one publisher at a time
        newest = current_release(session)
        if newest is None:
            return None
        if newest.manifest_sha256 is None or not shelf.manifest(newest.id).is_file():
            publish(session, newest.id, shelf, signer, instruments, reference_dir)
        release_id = newest.id
    if current_on_shelf(shelf) != release_id:
        point_current(shelf, release_id)
    return release_id
