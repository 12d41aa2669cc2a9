"""People who sign in to the consoles: an identity provider's verified email, linked to an API client.

A person acts as the client they are linked to (its principal, its scopes, its projects), so the
consoles and the API grant exactly the same things; the operator links people with
``agentbank clients link-person``. A console session is an access token of that client, marked
with the person, kept in an HTTP-only cookie. Requests that change something must also carry the
session's CSRF token, derived from the session token with the bank's secret (so nothing more is
stored, and a page of another site, which cannot read it, cannot forge a request).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.access.clients import find_client, token_hash
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.core.errors import ConflictError, InvalidRequestError, NotFoundError, PermissionDeniedError
from agentbank.core.statuses import ClientStatus
from agentbank.db.models import AccessToken, Client, Person


def link_person(session: Session, client_id: str, email: str, actor: audit.Actor) -> Person:
    """Let the person with ``email`` sign in to the consoles as client ``client_id``; audited."""
    client = find_client(session, client_id)
    if client is None:
        raise NotFoundError(f"no active client {client_id!r}")
    address = email.strip().lower()
    if "@" not in address or len(address) > 320:
        raise InvalidRequestError(f"{email!r} is not an email address")
    if session.scalars(select(Person).where(Person.email == address)).first() is not None:
        raise ConflictError(f"{address} is already linked to a client")
    person = Person(email=address, client_pk=client.id)
    session.add(person)
    session.flush()
    audit.record(session, actor, "person.link", Tier.ADMIN, details={"client_id": client_id, "person": str(person.id)})
    return person


def person_for_claims(session: Session, claims: dict[str, Any]) -> Person:
    """The linked person an identity provider vouched for; refused unless their email is verified and linked."""
    email = str(claims.get("email") or "").strip().lower()
    if not email:
        raise PermissionDeniedError("the identity provider did not give an email address")
    if claims.get("email_verified") is not True:
        raise PermissionDeniedError("the identity provider has not verified this email address")
    person = session.scalars(select(Person).where(Person.email == email)).first()
    client = session.get(Client, person.client_pk) if person is not None else None
    if person is None or client is None or client.status != ClientStatus.ACTIVE:
        raise PermissionDeniedError(f"{email} may not sign in to the bank", hint="ask the bank's operator to link it")
    return person


def open_session(session: Session, person: Person, lifetime_s: int) -> tuple[str, datetime]:
    """A console session for ``person``: the token for its cookie and when it ends; audited."""
    client = session.get_one(Client, person.client_pk)
    token = secrets.token_urlsafe(32)
    now = datetime.now(UTC)
    expires = now + timedelta(seconds=lifetime_s)
    session.add(AccessToken(token_hash=token_hash(token), client_pk=client.id, person_id=person.id,
                            scopes=list(client.scopes), issued_at=now, expires_at=expires))  # fmt: skip
    session.flush()
    audit.record(session, audit.Actor("client", client.client_id), "session.open", Tier.ADMIN,
                 details={"person": str(person.id)})  # fmt: skip
    return token, expires


def _console_token(session: Session, token: str) -> AccessToken | None:
    """A console session's token row (None for an unknown token or an API client's)."""
    access = session.scalars(select(AccessToken).where(AccessToken.token_hash == token_hash(token))).first()
    return access if access is not None and access.person_id is not None else None


def close_session(session: Session, token: str) -> None:
    """Sign out: the session's token is refused from now on."""
    access = _console_token(session, token)
    if access is not None and access.revoked_at is None:
        access.revoked_at = datetime.now(UTC)


def person_of_session(session: Session, token: str) -> tuple[Person, datetime] | None:
    """Who a console session belongs to, and when it ends."""
    access = _console_token(session, token)
    person = session.get(Person, access.person_id) if access is not None else None
    return (person, access.expires_at) if person is not None and access is not None else None


def csrf_token(secret: str, token: str) -> str:
    """The CSRF token of a console session: an HMAC of its token under the bank's secret."""
    return hmac.new(secret.encode(), b"csrf:" + token.encode(), hashlib.sha256).hexdigest()


def csrf_matches(secret: str, token: str, presented: str) -> bool:
    """Whether ``presented`` is the session's CSRF token (in constant time)."""
    return hmac.compare_digest(csrf_token(secret, token), presented)
