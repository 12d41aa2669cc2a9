"""Typed dependencies: the request's transaction, its principal, the bank's parts, scope checks.

Every route is authenticated by default; a route is public only when it is listed in ``PUBLIC``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from agentbank.access import people
from agentbank.access.clients import principal_for_token
from agentbank.access.principals import ANONYMOUS, Principal
from agentbank.audit.log import Actor
from agentbank.audit.signing_keys import AuditSigner, load_signer
from agentbank.core.errors import AgentBankError, AuthenticationRequiredError, PermissionDeniedError
from agentbank.core.settings import Settings
from agentbank.runtime.bank import Bank

SESSION_COOKIE = "agentbank_session"  # a person's console session (HTTP-only)
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}

# (method, path template) of the routes anyone may call; everything else needs a valid token.
PUBLIC = {
    ("GET", "/v1/health"),
    ("GET", "/v1/ready"),
    # The bank's state in counts (agents, builds, the release), for the front page: nothing about anyone.
    ("GET", "/v1/status"),
    # The front page: what the bank is and who each page is for; its state comes from /v1/status.
    ("GET", "/"),
    ("GET", "/home.js"),
    ("POST", "/oauth/token"),
    ("POST", "/oauth/revoke"),
    ("GET", "/v1/audit/checkpoint"),
    ("GET", "/v1/audit/checkpoints"),
    ("GET", "/v1/audit/public-key"),
    ("GET", "/v1/audit/proof/{seq}"),
    ("GET", "/v1/audit/consistency"),
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/redoc"),
    # The interview page, and redeeming an invitation (the invitation code is the credential).
    ("GET", "/interview"),
    ("POST", "/v1/interviews"),
    # The participant's portal page: it holds no data; everything it shows needs the participant's access code.
    ("GET", "/portal"),
    # The open tier's explorer page: it holds no data; every table it shows needs an aggregate:read token.
    ("GET", "/explore"),
    ("GET", "/explore.js"),
    # The reviewers' console: it holds no data; everything it shows needs a reviewer's session.
    ("GET", "/review"),
    ("GET", "/review.js"),
    # The teams' console and what the consoles share: no data; everything needs a member's session.
    ("GET", "/projects"),
    ("GET", "/projects.js"),
    ("GET", "/studies"),
    ("GET", "/studies.js"),
    ("GET", "/console.js"),
    ("GET", "/console.css"),
    # Signing in to the consoles at the identity provider, and back.
    ("GET", "/signin"),
    ("GET", "/signin/callback"),
    ("GET", "/survey"),
    ("GET", "/participant.js"),
    ("GET", "/proofs.js"),
}


# Dependencies that only read what the application holds are ``async``: FastAPI runs a plain ``def``
# dependency in its thread pool, a hop there and back on every request for an attribute.
async def get_bank(request: Request) -> Bank:
    """The bank the application was started with."""
    return request.app.state.bank


BankDep = Annotated[Bank, Depends(get_bank)]


async def get_settings(bank: BankDep) -> Settings:
    """The application's settings."""
    return bank.settings


SettingsDep = Annotated[Settings, Depends(get_settings)]


def get_session(bank: BankDep) -> Iterator[Session]:
    """The request's transaction: committed when the route returns, rolled back when it raises, except
    for a refusal whose audit record it holds (``AgentBankError.recorded``): that is committed, then raised."""
    with bank.sessions() as session, session.begin():
        try:
            yield session
        except AgentBankError as exc:
            if exc.recorded:
                session.commit()
            raise


# scope="function": the commit happens before the response is sent, so a failed commit is an error.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]


def get_principal(request: Request, session: SessionDep) -> Principal:
    """Who is calling: the principal behind the bearer token, or the console session's cookie, or anonymous.

    A request a console session sends to change something must carry the session's CSRF token.
    """
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        principal = principal_for_token(session, token.strip())
        if principal is None:  # a console session's token among them: it is accepted only as its cookie
            raise AuthenticationRequiredError("the token is unknown, expired or revoked")
        return principal
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return ANONYMOUS
    principal = principal_for_token(session, cookie, console=True)
    if principal is None:
        raise AuthenticationRequiredError("your session has ended; sign in again")
    if request.method not in SAFE_METHODS:
        secret = request.app.state.bank.settings.secret_key.get_secret_value()
        if not people.csrf_matches(secret, cookie, request.headers.get("x-csrf-token", "")):
            raise PermissionDeniedError("the request lacks its session's CSRF token (X-CSRF-Token)")
    return principal


PrincipalDep = Annotated[Principal, Depends(get_principal)]


# The route a spoken answer's frames arrive on, one request per 100 ms frame.
AUDIO_FRAMES = ("PUT", "/v1/interviews/current/turns/{turn}/chunks/{seq}")


def enforce_access(request: Request, principal: PrincipalDep) -> None:
    """Default deny: authenticate every non-public route, and rate-limit every caller."""
    route = request.scope.get("route")
    template = getattr(route, "path", request.url.path)
    caller = principal.id if principal.kind != "anonymous" else f"ip:{request.client.host if request.client else '?'}"
    if (request.method, template) == AUDIO_FRAMES:
        # Ten frames a second while a person speaks: counted apart, so an answer is never cut by the common limit.
        request.app.state.frame_limiter.check(f"frames:{caller}")
    else:
        request.app.state.limiter.check(caller)
    if (request.method, template) not in PUBLIC and principal.kind == "anonymous":
        raise AuthenticationRequiredError("this route needs a bearer token")


def require(scope: str) -> Any:
    """A dependency that admits only principals holding ``scope``."""

    async def check(principal: PrincipalDep) -> Principal:
        principal.require(scope)
        return principal

    return Depends(check)


def get_signer(request: Request) -> AuditSigner:
    """The key that signs audit checkpoints, as its file holds it now (a rotation is followed at once)."""
    request.app.state.signer = load_signer(request.app.state.bank.settings)
    return request.app.state.signer


SignerDep = Annotated[AuditSigner, Depends(get_signer)]


def actor(principal: Principal) -> Actor:
    """The audit log's name for a principal."""
    return principal.actor
