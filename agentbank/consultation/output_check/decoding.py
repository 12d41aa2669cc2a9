"""Readable decodings of the encoded runs inside an answer, for the output check to check again.

A model told to hide what it repeats writes it in an encoding. Each decoder here looks for runs that
may be one, decodes them generously (whitespace between groups ignored, any alignment) and keeps
whatever reads as text. Generosity costs nothing in false withholds: prose decoded as if it were
base64 is noise, and noise never shares a span with a transcript or holds a canary.

Covered: base64 (standard and URL-safe, also in groups), base32, hex (plain, grouped, ``\\x`` or ``0x``
prefixed), URL percent-encoding, HTML entities, ``\\uXXXX`` escapes, 8-bit binary, decimal character
codes, Morse code (letters apart by spaces, words by a slash or a bar), and the string values of any JSON
in the answer (in order and by key, so ``{"w1": ...}`` does not interleave keys with the words).
Decoded text is decoded again, to a small depth.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from collections.abc import Callable, Iterator
from urllib.parse import unquote

MIN_RUN = 16  # encoded characters; shorter runs are ordinary words and numbers
MORSE_CODES = 2  # letters in Morse: dashes and dots in prose ("well - no...") decode to noise, which matches nothing
DEPTH = 2
MAX_VARIANTS = 64

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_=-](?:[A-Za-z0-9+/_=\s-]*[A-Za-z0-9+/_=-])?")
_BASE32_RUN = re.compile(r"[A-Za-z2-7=](?:[A-Za-z2-7=\s]*[A-Za-z2-7=])?")
_HEX_RUN = re.compile(r"(?:(?:\\x|0x)?[0-9a-fA-F]{2}[\s:,]*){8,}")
_BINARY_RUN = re.compile(r"(?:[01]{8}[\s,]*){4,}")
_DECIMAL_RUN = re.compile(r"(?:\b(?:3[2-9]|[4-9]\d|1[01]\d|12[0-6])\b[\s,]*){8,}")
_ESCAPED = re.compile(r"%[0-9a-fA-F]{2}|&#?\w+;|\\u[0-9a-fA-F]{4}")
_SPACE = re.compile(r"[\s:,]|\\x|0x")
_MORSE_RUN = re.compile(r"[.\-·•−–—_](?:[.\-·•−–—_\s/|]*[.\-·•−–—_])?")
_MORSE = dict(zip((
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- --.. "
    "----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----.").split(), "abcdefghijklmnopqrstuvwxyz0123456789",
    strict=True))  # fmt: skip


def _readable(data: bytes) -> Iterator[str]:
    """The printable stretches of decoded bytes that are long enough to carry a phrase."""
    text = data.decode("utf-8", errors="replace")
    for piece in re.split(r"[^\S ]|[\ufffd\x00-\x1f\x7f]", text):
        if len(piece.strip()) >= 8:
            yield piece


def _aligned(compact: str, block: int, decode: Callable[[str], bytes]) -> Iterator[str]:
    """Decode at every alignment, so a prefix of ordinary words glued to the run does not spoil it."""
    for start in range(block):
        body = compact[start:]
        # Padded first, so the tail is kept; truncated where padding cannot make the length valid.
        for candidate in (body + "=" * (-len(body) % block), body[: len(body) // block * block]):
            try:
                yield from _readable(decode(candidate))
                break
            except (ValueError, binascii.Error):
                continue


def _base64(text: str) -> Iterator[str]:
    for match in _BASE64_RUN.finditer(text):
        compact = re.sub(r"\s+", "", match.group()).rstrip("=").replace("-", "+").replace("_", "/")
        if len(compact) >= MIN_RUN:
            yield from _aligned(compact.replace("=", ""), 4, lambda b: base64.b64decode(b, validate=True))


def _base32(text: str) -> Iterator[str]:
    for match in _BASE32_RUN.finditer(text):
        compact = re.sub(r"[\s=]+", "", match.group()).upper()
        if len(compact) >= MIN_RUN:
            yield from _aligned(compact, 8, base64.b32decode)


def _hex(text: str) -> Iterator[str]:
    for match in _HEX_RUN.finditer(text):
        compact = _SPACE.sub("", match.group())
        yield from _aligned(compact, 2, lambda h: binascii.unhexlify(h.rstrip("=")))


def _numbers(text: str) -> Iterator[str]:
    for match in _BINARY_RUN.finditer(text):
        yield from _readable(bytes(int(b, 2) for b in re.findall(r"[01]{8}", match.group())))
    for match in _DECIMAL_RUN.finditer(text):
        yield "".join(chr(int(n)) for n in re.findall(r"\d+", match.group()))


def _morse(text: str) -> Iterator[str]:
    for match in _MORSE_RUN.finditer(text):
        run = re.sub(r"[·•]", ".", re.sub(r"[−–—_]", "-", match.group()))
        letters = run.split()
        if len([c for c in letters if c not in "/|"]) >= MORSE_CODES:
            words = re.split(r"\s*[/|]\s*|\s{3,}", run)
            yield " ".join("".join(_MORSE.get(code, "") for code in word.split()) for word in words)


def _escapes(text: str) -> Iterator[str]:
    if _ESCAPED.search(text):
        unescaped = html.unescape(unquote(text))
        yield re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), unescaped)


def _json_strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _json_strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _json_strings(item)


def _natural(key: str) -> tuple[object, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", key))


def _json(text: str) -> Iterator[str]:
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"[\[{]", text)):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, (dict, list)):
            yield " ".join(_json_strings(value))
            if isinstance(value, dict):  # keys named in order ("w1", "w2", ...) but listed out of order
                yield " ".join(" ".join(_json_strings(value[k])) for k in sorted(value, key=_natural))


DECODERS = (_base64, _base32, _hex, _numbers, _morse, _escapes, _json)


def decoded_variants(text: str) -> list[str]:
    """The text itself, then every readable decoding found inside it (and inside those, to ``DEPTH``)."""
    found = [text]
    frontier = [text]
    for _ in range(DEPTH):
        fresh = []
        for source in frontier:
            for decoder in DECODERS:
                for decoded in decoder(source):
                    if decoded not in found and len(found) < MAX_VARIANTS:
                        found.append(decoded)
                        fresh.append(decoded)
        frontier = fresh
    return found
