"""The audit log kept outside the database as well: C2SP tlog-tiles on a directory, append-only.

A restore replaces the database with an older copy; the tiles are not part of a backup, and nothing here
ever replaces a file, so they keep every leaf the log ever published. After a restore the database's log
is rebuilt from them (``restoring``): the tree the witnesses cosigned is still a prefix of the bank's.

The layout is c2sp.org/tlog-tiles: ``tile/<L>/<N>`` holds the 256 hashes of level-``L`` tile ``N``
(level-0 tiles hold leaf hashes; a level-``L`` hash is the root of ``256**L`` leaves), ``tile/entries/<N>``
the 256 entries of those leaves, each a big-endian 16-bit length and its bytes; a tile not yet full is
``<N>.p/<W>`` with its ``W`` hashes or entries, and is superseded, never rewritten, by a wider one. ``N`` is
written in groups of three digits, each but the last prefixed ``x`` (1234067 is ``x001/x234/067``). Beside
them, in the same layout, ``chain/<N>`` holds the events' chain hashes (the bank's own addition, which a
tlog client ignores): with them a rebuilt log goes on chaining where the lost events ended. Entries and
chain hashes are digests (``entries``), never an event's content: nothing of anyone is here.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Callable, Sequence
from pathlib import Path

from agentbank.audit import merkle
from agentbank.core.errors import ConflictError
from agentbank.core.settings import Settings

WIDTH = 256  # hashes (or entries) in a full tile
HASH = 32


class TileLogError(ConflictError):
    """Tiles that disagree with what is appended to them: the log would be rewritten."""

    code = "audit_tiles_conflict"


def index_path(n: int) -> str:
    """A tile index in groups of three digits, all but the last prefixed with ``x``."""
    groups = []
    while True:
        groups.append(f"{n % 1000:03d}")
        n //= 1000
        if n == 0:
            break
    return "/".join([*(f"x{g}" for g in reversed(groups[1:])), groups[0]])


def tile_path(level: int | str, n: int, width: int = WIDTH) -> str:
    """The path of tile ``n`` at ``level`` (``"entries"`` for entry bundles), partial below ``WIDTH``."""
    return f"tile/{level}/{index_path(n)}" + ("" if width == WIDTH else f".p/{width}")


class TileLog:
    """The tiles under ``folder``: written as leaves are appended, read to rebuild the database's copy."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def size(self) -> int:
        """How many leaves the tiles hold: the full level-0 tiles and the widest partial one after them."""
        base = self.folder / "tile" / "0"
        if not base.is_dir():
            return 0
        full = _count_full(base)
        partial = self._partial_width(0, full)
        return full * WIDTH + partial

    def _partial_width(self, level: int | str, n: int) -> int:
        folder = self.folder / tile_path(level, n, 1).rsplit("/", 1)[0]
        widths = [int(p.name) for p in folder.iterdir() if p.name.isdigit()] if folder.is_dir() else []
        return max(widths, default=0)

    def hashes(self, level: int, n: int, width: int) -> list[bytes]:
        """The first ``width`` hashes of tile ``n`` at ``level`` (from the full tile, or a partial one)."""
        data = self._read(tile_path(level, n) if width == WIDTH else self._at_least(level, n, width))
        return [data[i : i + HASH] for i in range(0, width * HASH, HASH)]

    def entries(self, start: int, end: int) -> list[bytes]:
        """The entries of leaves [start, end)."""
        return self._span("entries", start, end, self._unbundle)

    def chain(self, start: int, end: int) -> list[bytes]:
        """The chain hashes of the events at leaves [start, end)."""
        return self._span("chain", start, end, lambda d: [d[i : i + HASH] for i in range(0, len(d), HASH)])

    def _span(self, kind: str, start: int, end: int, split: Callable[[bytes], list[bytes]]) -> list[bytes]:
        out: list[bytes] = []
        for n in range(start // WIDTH, (end + WIDTH - 1) // WIDTH):
            width = min(WIDTH, end - n * WIDTH)
            data = self._read(tile_path(kind, n) if width == WIDTH else self._at_least(kind, n, width))
            out += split(data)[max(start - n * WIDTH, 0) : width]
        return out

    def _at_least(self, level: int | str, n: int, width: int) -> str:
        """A partial tile at least ``width`` wide (the narrowest), or the full one once it exists."""
        if (self.folder / tile_path(level, n)).exists():
            return tile_path(level, n)
        folder = self.folder / tile_path(level, n, 1).rsplit("/", 1)[0]
        widths = sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit() and int(p.name) >= width)
        if not widths:
            raise TileLogError(f"the audit tiles hold no {level} tile {n} of {width} entries")
        return tile_path(level, n, widths[0])

    def append(self, start: int, entries: Sequence[bytes], chain: Sequence[bytes]) -> int:
        """Write leaves ``start``.. with these entries and their events' chain hashes (``start`` is the
        tiles' size, or less where the leaves are already there and must be the same); the new size.
        Nothing written is ever replaced."""
        size = self.size()
        if start > size:
            raise TileLogError(f"the audit tiles hold {size} leaves; leaf {start} cannot follow them")
        if start < size:  # already written (a second process, a retry): they must agree
            overlap = min(size, start + len(entries)) - start
            if self.entries(start, start + overlap) != list(entries[:overlap]):
                raise TileLogError(f"the audit log's leaves from {start} differ from the tiles kept outside it")
            start, entries, chain = start + overlap, entries[overlap:], chain[overlap:]
        if not entries:
            return size
        end = start + len(entries)
        first = start - start % WIDTH  # the tile the new leaves begin in is written again wider, as a new file
        pending = [*self.entries(first, start), *entries]
        hashes = [*self.chain(first, start), *chain]
        for n in range(first // WIDTH, (end + WIDTH - 1) // WIDTH):
            chunk = pending[n * WIDTH - first : (n + 1) * WIDTH - first]
            self._write(tile_path("chain", n, len(chunk)), b"".join(hashes[n * WIDTH - first :][: len(chunk)]))
            self._write(tile_path("entries", n, len(chunk)), b"".join(struct.pack(">H", len(e)) + e for e in chunk))
            self._write(tile_path(0, n, len(chunk)), b"".join(merkle.leaf_hash(e) for e in chunk))
        self._write_upper(start, end)
        return end

    def _write_upper(self, before: int, size: int) -> None:
        """Each level's tiles that grew from a tree of ``before`` leaves to one of ``size``, from the full
        tiles below them."""
        level, was, count = 1, before // WIDTH, size // WIDTH  # level-1 hashes: one per full level-0 tile
        while count > was:
            for n in range(was // WIDTH, (count - 1) // WIDTH + 1):
                width = min(WIDTH, count - n * WIDTH)
                below = [self._root_of(level - 1, n * WIDTH + i) for i in range(width)]
                self._write(tile_path(level, n, width), b"".join(below))
            level, was, count = level + 1, was // WIDTH, count // WIDTH

    def _root_of(self, level: int, n: int) -> bytes:
        """The root of full tile ``n`` at ``level``: the perfect subtree over its 256 hashes."""
        row = self.hashes(level, n, WIDTH)
        while len(row) > 1:
            row = [merkle.node_hash(row[i], row[i + 1]) for i in range(0, len(row), 2)]
        return row[0]

    def root(self, size: int | None = None) -> bytes:
        """The tree's root over the first ``size`` leaves (every leaf by default)."""
        size = self.size() if size is None else size
        return merkle.MemoryTree(merkle.leaf_hash(e) for e in self.entries(0, size)).root()

    def _read(self, path: str) -> bytes:
        try:
            return (self.folder / path).read_bytes()
        except FileNotFoundError:
            raise TileLogError(f"the audit tiles lack {path}") from None

    def _write(self, path: str, data: bytes) -> None:
        """Write a file once: an existing one must hold the same bytes (a tile is never rewritten)."""
        target = self.folder / path
        if target.exists():
            if target.read_bytes() != data:
                raise TileLogError(f"the audit tile {path} exists with other contents")
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}")
        temporary.write_bytes(data)
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        try:
            os.link(temporary, target)  # fails if another writer got there first: then compare
        except FileExistsError:
            if target.read_bytes() != data:
                raise TileLogError(f"the audit tile {path} exists with other contents") from None
        finally:
            temporary.unlink()

    @staticmethod
    def _unbundle(data: bytes) -> list[bytes]:
        out, at = [], 0
        while at < len(data):
            (length,) = struct.unpack_from(">H", data, at)
            out.append(data[at + 2 : at + 2 + length])
            at += 2 + length
        return out


def outside_tiles(settings: Settings) -> TileLog:
    """The bank's tiles, beside the checkpoints kept outside the database."""
    return TileLog(settings.audit_tiles_dir)


def _count_full(base: Path) -> int:
    """How many full tiles a level's folder holds: one more than the largest index, found by descending
    into the largest ``x`` group that holds one (tiles are written in order)."""
    last = _largest(base, 0)
    return 0 if last is None else last + 1


def _largest(folder: Path, prefix: int) -> int | None:
    groups = sorted((int(p.name[1:]) for p in folder.iterdir() if p.is_dir() and re.fullmatch(r"x\d{3}", p.name)),
                    reverse=True)  # fmt: skip
    for group in groups:  # any index under a group is larger than every file beside it
        found = _largest(folder / f"x{group:03d}", prefix * 1000 + group)
        if found is not None:
            return found
    files = [int(p.name) for p in folder.iterdir() if p.is_file() and re.fullmatch(r"\d{3}", p.name)]
    return prefix * 1000 + max(files) if files else None


__all__ = ["WIDTH", "TileLog", "TileLogError", "index_path", "outside_tiles", "tile_path"]
