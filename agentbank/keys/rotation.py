"""Crypto-shredding: rotate the keyring so that a withdrawn participant's data key opens nothing.

A rotation, inside the caller's transaction, makes a new KEK version, re-wraps every remaining
participant's data key under it (dropping the one being withdrawn) and, once the transaction has
committed, destroys every older version. Until the commit the old versions must live: were the
transaction rolled back, the rows would still need them.

Making a participant's key and rotating are serialized by one advisory lock of the database:
makers hold it shared until they commit, a rotation holds it exclusively. So a rotation sees every
key made before it, and every key made after it uses the new version. A crash between the commit
and the destruction leaves old versions that no row needs; ``purge_unused`` (run by every rotation
and by ``agentbank keys purge``) destroys them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import event, select, text
from sqlalchemy.orm import Session

from agentbank.db.models import Participant
from agentbank.keys.crypto import KeyRing, wrapped_version

KEYRING_LOCK = 0x6B657973  # "keys"


def hold_keyring(session: Session) -> None:
    """Take the keyring lock shared until the transaction ends: call before storing a new wrapped key."""
    session.execute(text("SELECT pg_advisory_xact_lock_shared(:key)"), {"key": KEYRING_LOCK})


@dataclass(frozen=True)
class Rotation:
    """What a rotation did: the new version, the keys re-wrapped under it, and the versions destroyed at commit."""

    version: int
    wrapped: dict[uuid.UUID, bytes]  # each remaining participant's data key under the new version
    retired: list[int]

    @property
    def rewrapped(self) -> int:
        """How many keys were re-wrapped."""
        return len(self.wrapped)


def rotate(session: Session, keys: KeyRing, *, dropping: uuid.UUID | None = None) -> Rotation:
    """Re-wrap every live data key under a new KEK (``dropping``'s key is destroyed instead).

    The versions that wrapped them are destroyed after the caller's transaction commits.
    """
    _hold_exclusive(session)
    version = keys.store.add_version()
    wrapped: dict[uuid.UUID, bytes] = {}
    for participant in session.scalars(
        select(Participant).where(Participant.wrapped_key.is_not(None)).with_for_update()
    ):
        if participant.id == dropping:
            participant.wrapped_key = None
            continue
        assert participant.wrapped_key is not None
        wrapped[participant.id] = keys.rewrap(participant.id, participant.wrapped_key, version)
        participant.wrapped_key = wrapped[participant.id]
    session.flush()
    retired = [v for v in keys.store.versions() if v < version]
    _after_commit(session, lambda: keys.store.destroy(set(retired)))
    return Rotation(version, wrapped, retired)


def purge_unused(session: Session, keys: KeyRing) -> list[int]:
    """Destroy every KEK version that no stored key needs, except the newest; returns them."""
    _hold_exclusive(session)
    wrapped = session.scalars(select(Participant.wrapped_key).where(Participant.wrapped_key.is_not(None)))
    needed = {wrapped_version(w) for w in wrapped if w is not None}
    versions = keys.store.versions()
    unused = {v for v in versions[:-1] if v not in needed}
    keys.store.destroy(unused)
    return sorted(unused)


def _hold_exclusive(session: Session) -> None:
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": KEYRING_LOCK})


def _after_commit(session: Session, action: Callable[[], None]) -> None:
    """Run ``action`` once this session's transaction commits; never if it rolls back first."""
    state = {"open": True}

    def committed(_: Session) -> None:
        if state["open"]:
            state["open"] = False
            action()

    def rolled_back(_: Session) -> None:
        state["open"] = False

    event.listen(session, "after_commit", committed, once=True)
    event.listen(session, "after_soft_rollback", rolled_back, once=True)
