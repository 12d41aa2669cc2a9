"""What a Merkle leaf commits to: the event as the participant's portal shows it, beside its chain hash.

Leaf version 2 (events written since migration 0029): the entry is the SHA-256 of the canonical JSON of
``view(event)``, ``{"v": 2, "hash", "at", "action", "tier", "actor_kind", "project_id", "purpose", "asked",
"outcome"}``: the chain hash in hex (the receipt), the time in microseconds since 1970 (UTC), and the fields
the portal serves for a use (``GET /v1/participant/audit``), derived from the event exactly as it derives
them. An edit of anything the participant reads changes the leaf, so their proof fails even where whoever
edited kept the chain hash. The participant's browser (``app/web/proofs.js``) builds the same bytes from the
use it shows and hashes them itself; it is given no content by the public proof route. The entry is a
digest, 32 bytes like a version-1 entry, so whatever keeps entries (a copy of the tree outside the
database) keeps no event's content.

Canonical JSON, the same bytes in Python and in a browser: keys sorted by code point, no whitespace,
strings escaped as JSON does (non-ASCII as is), and numbers written as JavaScript writes them.

Version 0: an event the database lost in a restore, rebuilt from the tiles kept outside it (``outside``):
its entry and chain hash as the tiles hold them, its content gone with the database it was in.

Version 1 (events written before migration 0029): the entry is the chain hash alone, as those leaves were
signed and cosigned; rewriting them would rewrite signed roots. Their content is proven only through the
chain hash, which a participant's page cannot recompute (it would need everything the event holds).

The view is part of the log's format: changing what it holds, or how it is derived, takes a new leaf
version for the events written after the change, never a rewrite of the leaves already signed.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import UTC, datetime, timedelta
from typing import Any

from agentbank.audit import merkle
from agentbank.db.models import AuditEvent

LEAF_VERSION = 2  # what the database gives events written now (its insert trigger)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ASKED = ("instrument", "items", "condition", "kind", "experiment", "arms", "blinding")


def asked(details: dict[str, Any]) -> dict[str, Any]:
    """What was asked, as the portal shows it: item keys and the like, open questions only as hashes."""
    shown = {key: details[key] for key in ASKED if details.get(key)}
    if details.get("question_sha256"):
        shown["question_sha256"] = details["question_sha256"]
    elif details.get("questions"):  # events written before answers passed the door kept the wording
        shown["question_sha256"] = [hashlib.sha256(" ".join(q.split()).encode()).hexdigest()
                                    for q in details["questions"]]  # fmt: skip
    return shown


def outcome(action: str, details: dict[str, Any]) -> str | None:
    """What came of the use, as the portal shows it."""
    if action in ("job.answer", "focus_group.answer"):
        if details.get("withheld"):
            return "withheld"
        return "released" if details.get("released") else "unavailable"
    if action in ("population.answer", "release.member"):  # the second: written since migration 0030 only
        return "aggregate"
    if action in ("operator.answer", "evaluation.answer", "experiment.answer"):
        return action.split(".")[0]
    if action == "output.withheld":
        return "withheld"
    if action == "review.withheld.decide":
        return str(details.get("decision"))
    return None


def view(event: AuditEvent) -> dict[str, Any]:
    """The version-2 entry's fields: the use as the participant reads it, and its receipt."""
    details = event.details or {}
    return {
        "v": 2,
        "hash": event.hash.hex() if event.hash else "",
        "at": (event.created_at - EPOCH) // timedelta(microseconds=1),  # exact, unlike a float timestamp
        "action": event.action,
        "tier": event.tier,
        "actor_kind": event.actor_kind,
        "project_id": str(event.project_id) if event.project_id else None,
        "purpose": details.get("purpose"),
        "asked": asked(details),
        "outcome": outcome(event.action, details),
    }


KEPT_OUTSIDE = 0  # an event a restore lost, rebuilt from the tiles kept outside: its entry alone (``outside``)


def entry(event: AuditEvent) -> bytes:
    """The bytes the event's leaf hashes, by its leaf version."""
    if event.leaf_version == KEPT_OUTSIDE:
        return bytes.fromhex(str((event.details or {}).get("entry", "")))
    if event.leaf_version == 1:
        return event.hash or b""
    if event.leaf_version == 2:
        return hashlib.sha256(canonical(view(event)).encode()).digest()
    raise ValueError(f"event {event.seq} has a leaf version this code does not know ({event.leaf_version})")


def leaf(event: AuditEvent) -> bytes:
    """The event's Merkle leaf hash."""
    return merkle.leaf_hash(entry(event))


def canonical(value: Any) -> str:
    """JSON with sorted keys and no whitespace, numbers as JavaScript writes them."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):  # beyond 2**53 a browser holds the nearest double, and writes that
        return str(value) if abs(value) <= 2**53 else js_number(float(value))
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{canonical(str(k))}:{canonical(value[k])}" for k in sorted(value, key=str)) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def js_number(x: float) -> str:
    """A float as ECMAScript's Number::toString writes it: the same shortest digits as ``repr``, but 2.0 is
    "2", 1e-07 is "1e-7" and 1e+16 is "10000000000000000" (exponents only beyond 1e21 and below 1e-6)."""
    if not math.isfinite(x):
        return "null"  # what JSON.stringify writes; JSON itself has no such number
    if x == 0:
        return "0"
    mantissa, _, exponent = repr(abs(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    n = len(whole) + int(exponent or 0) - (len(digits) - len(digits.lstrip("0")))  # value = 0.digits x 10**n
    digits = digits.strip("0")
    k = len(digits)
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = f"{'+' if n > 0 else '-'}{abs(n - 1)}"
        text = f"{digits}e{e}" if k == 1 else f"{digits[0]}.{digits[1:]}e{e}"
    return ("-" if x < 0 else "") + text
