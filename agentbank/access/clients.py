"""OAuth2 clients and their opaque bearer tokens.

Secrets are stored as scrypt hashes and tokens as sha256 hashes (they carry 256 random bits, so a
fast hash suffices); revoking a token or its client takes effect on the very next request.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from agentbank.access.principals import SCOPES, Principal
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import InvalidRequestError, NotFoundError
from agentbank.core.statuses import ClientStatus, move
from agentbank.db.models import AccessToken, Client, Participant

SALT_BYTES = 16


def hash_secret(secret: str, salt: bytes | None = None) -> bytes:
    """salt + scrypt(secret): slow on purpose, so a leaked table does not yield secrets."""
    salt = salt or os.urandom(SALT_BYTES)
    return salt + hashlib.scrypt(secret.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)


def check_secret(secret: str, stored: bytes) -> bool:
    """Whether ``secret`` matches a stored hash, in constant time."""
    return hmac.compare_digest(hash_secret(secret, stored[:SALT_BYTES]), stored)


def token_hash(token: str) -> str:
    """The stored form of a bearer token."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class NewClient:
    """A created client with its secret, which is shown once and never stored."""

    client: Client
    secret: str


def create_client(session: Session, name: str, scopes: list[str], actor: audit.Actor) -> NewClient:
    """A new active client with these scopes."""
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown or not scopes:
        raise InvalidRequestError(f"unknown or missing scopes: {', '.join(unknown) or '(none)'}")
    secret = secrets.token_urlsafe(32)
    client = Client(
        client_id=f"cl_{secrets.token_hex(8)}", name=name, secret_hash=hash_secret(secret), scopes=sorted(scopes)
    )
    session.add(client)
    session.flush()
    audit.record(
        session, actor, "client.create", Tier.ADMIN, details={"client_id": client.client_id, "scopes": client.scopes}
    )
    return NewClient(client, secret)


def find_client(session: Session, client_id: str) -> Client | None:
    """An active client by its public id."""
    active = select(Client).where(Client.client_id == client_id, Client.status == ClientStatus.ACTIVE)
    return session.scalars(active).first()


def revoke_client(session: Session, client_id: str, actor: audit.Actor) -> Client:
    """Revoke a client and every token it holds."""
    client = find_client(session, client_id)
    if client is None:
        raise NotFoundError(f"no active client {client_id!r}")
    now = datetime.now(UTC)
    client.status, client.revoked_at = move(client.status, ClientStatus.REVOKED, "the client"), now
    session.execute(
        update(AccessToken)
        .where(AccessToken.client_pk == client.id, AccessToken.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    audit.record(session, actor, "client.revoke", Tier.ADMIN, details={"client_id": client_id})
    return client


def list_clients(session: Session) -> list[Client]:
    """Every client, newest first."""
    return list(session.scalars(select(Client).order_by(Client.created_at.desc())))


def store_token(session: Session, client: Client, token: str, scopes: list[str], lifetime_s: int) -> AccessToken:
    """Store an issued token (hashed) and audit the issue in the same transaction."""
    now = datetime.now(UTC)
    row = AccessToken(
        token_hash=token_hash(token),
        client_pk=client.id,
        scopes=scopes,
        issued_at=now,
        expires_at=now + timedelta(seconds=lifetime_s),
    )
    session.add(row)
    session.flush()
    audit.record(
        session, audit.Actor("client", client.client_id), "token.issue", Tier.ADMIN, details={"scopes": scopes}
    )
    return row


def find_token(session: Session, token: str) -> AccessToken | None:
    """A stored token by its value, whatever its state."""
    return session.scalars(select(AccessToken).where(AccessToken.token_hash == token_hash(token))).first()


def revoke_token(session: Session, row: AccessToken, client: Client) -> None:
    """Revoke one token (RFC 7009); the next request that presents it is refused."""
    if row.revoked_at is None:
        row.revoked_at = datetime.now(UTC)
        audit.record(session, audit.Actor("client", client.client_id), "token.revoke", Tier.ADMIN)


def issue_participant_token(
    session: Session, participant: Participant, lifetime_s: int, token: str | None = None
) -> str:
    """A portal session token for a participant (their access code or identity provider vouched for them).

    ``token`` is the credential to store (hashed), when the caller chose its form; by default a random one.
    """
    token = token or secrets.token_urlsafe(32)
    now = datetime.now(UTC)
    session.add(
        AccessToken(
            token_hash=token_hash(token),
            participant_id=participant.id,
            scopes=[],
            issued_at=now,
            expires_at=now + timedelta(seconds=lifetime_s),
        )
    )
    session.flush()
    return token


def revoke_participant_tokens(session: Session, participant_id: uuid.UUID, at: datetime) -> None:
    """End every live token of a participant (the interview's, when the interview is finished)."""
    session.execute(
        update(AccessToken)
        .where(AccessToken.participant_id == participant_id, AccessToken.revoked_at.is_(None))
        .values(revoked_at=at)
    )


# The token with its client or participant in one query of the columns needed, built once and run on the
# session's connection (no objects, no ORM execution): every request asks it, and revocation is read each time.
_TOKEN = (
    select(AccessToken.revoked_at, AccessToken.expires_at, AccessToken.person_id, AccessToken.participant_id,
           AccessToken.scopes, Client.id.label("client_pk"), Client.client_id, Client.status, Participant.pseudonym)
    .outerjoin(Client, Client.id == AccessToken.client_pk)
    .outerjoin(Participant, Participant.id == AccessToken.participant_id)
    .where(AccessToken.token_hash == bindparam("hash"))
)  # fmt: skip


def principal_for_token(session: Session, token: str, *, console: bool = False) -> Principal | None:
    """The principal behind a live token (``live_principal``), or None."""
    return live_principal(session, token, console=console)[0]


def live_principal(session: Session, token: str, *, console: bool = False) -> tuple[Principal | None, datetime | None]:
    """The principal behind a live token, or None for an unknown, expired or revoked one; and when the token
    expires (what keeps it in memory is bounded by it, ``live_tokens``).

    With ``console``, only a person's console session counts (an API token is no session cookie); without
    it, a console session does not count: its token travels only as the HTTP-only cookie, where every
    change also needs the session's CSRF token, so sent as a bearer token it would skip that check.
    """
    found = session.connection().execute(_TOKEN, {"hash": token_hash(token)}).first()
    if found is None:
        return None, None
    return _principal_of(found, console), found.expires_at


def _principal_of(found: Any, console: bool) -> Principal | None:  # a row of _TOKEN
    if found.revoked_at is not None or found.expires_at <= datetime.now(UTC):
        return None
    if console != (found.person_id is not None):
        return None
    if found.participant_id is not None:
        if found.pseudonym is None:
            return None
        return Principal("participant", found.pseudonym, found.participant_id)
    if found.client_pk is None or found.status != ClientStatus.ACTIVE:
        return None
    return Principal("client", found.client_id, found.client_pk, frozenset(found.scopes))
