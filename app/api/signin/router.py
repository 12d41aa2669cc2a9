"""People sign in to the consoles with OpenID Connect (Authlib's client), as the API client they are
linked to; their session is an HTTP-only cookie, and every change they make carries its CSRF token."""

from __future__ import annotations

import html
from typing import Annotated

from authlib.integrations.starlette_client import OAuth, OAuthError, StarletteOAuth2App
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.responses import JSONResponse, Response

try:  # Authlib's client speaks through httpx2 where it is installed (the OpenAI SDK brings it), else httpx
    from httpx2 import HTTPError as TransportError
except ImportError:  # pragma: no cover
    from httpx import HTTPError as TransportError  # type: ignore[assignment]

from agentbank.access import people
from agentbank.core.errors import AgentBankError, AuthenticationRequiredError
from agentbank.core.settings import Settings
from app.api.deps import SESSION_COOKIE, PrincipalDep, SessionDep, SettingsDep
from app.api.signin.schemas import SessionRead, SignedOut

router = APIRouter(tags=["console sign-in"])

UNREACHABLE = "The bank cannot reach its identity provider just now. Try again in a few minutes."


def provider(settings: Settings) -> StarletteOAuth2App | None:
    """The identity provider's client, from its discovery document; None when sign-in is not configured."""
    if not settings.oidc_issuer or not settings.oidc_client_id:
        return None
    oauth = OAuth()
    secret = settings.oidc_client_secret.get_secret_value() if settings.oidc_client_secret else None
    oauth.register(
        "provider",
        client_id=settings.oidc_client_id,
        client_secret=secret,
        server_metadata_url=settings.oidc_issuer.rstrip("/") + "/.well-known/openid-configuration",
        client_kwargs={"scope": "openid email profile", "code_challenge_method": "S256"},
    )
    client = oauth.create_client("provider")
    assert isinstance(client, StarletteOAuth2App)
    return client


def _local(path: str) -> str:
    """Where to go after sign-in: a page of this bank only (never another site)."""
    return path if path.startswith("/") and not path.startswith("//") and "\\" not in path else "/review"


def _refused(message: str, status: int) -> HTMLResponse:
    page = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in refused</title></head>'
            f'<body><main><h1>Sign-in refused</h1><p role="alert">{html.escape(message)}</p>'
            f'<p><a href="/signin">Try again</a></p></main></body></html>')  # fmt: skip
    return HTMLResponse(page, status_code=status)


@router.get("/signin", response_class=HTMLResponse, responses={302: {"description": "To the identity provider"}})
async def signin(request: Request, next: Annotated[str, Query(max_length=200)] = "/review") -> Response:
    """Sign in to the consoles at the bank's identity provider; back at ``next`` afterwards."""
    client = request.app.state.oidc
    if client is None:
        return _refused("Signing in to the consoles is not set up on this bank. Ask its operator.", 404)
    request.session["next"] = _local(next)
    try:
        return await client.authorize_redirect(request, str(request.url_for("signin_callback")))
    except (TransportError, ValueError):  # no discovery document: down, or not an OpenID provider
        return _refused(UNREACHABLE, 502)


@router.get("/signin/callback", name="signin_callback", response_class=HTMLResponse)
async def callback(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """Where the identity provider sends the person back: open their session, or say why not."""
    client = request.app.state.oidc
    if client is None:
        return _refused("Signing in to the consoles is not set up on this bank. Ask its operator.", 404)
    try:
        token = await client.authorize_access_token(request)
    except OAuthError as exc:
        return _refused(f"The identity provider did not sign you in ({exc.error}).", 400)
    except (TransportError, ValueError):
        return _refused(UNREACHABLE, 502)
    try:
        person = people.person_for_claims(session, dict(token.get("userinfo") or {}))
    except AgentBankError as exc:
        return _refused(str(exc), exc.status_code)
    cookie, _ = people.open_session(session, person, settings.console_session_s)
    response = RedirectResponse(_local(request.session.pop("next", "/review")), status_code=303)
    response.set_cookie(SESSION_COOKIE, cookie, max_age=settings.console_session_s, httponly=True, secure=True,
                        samesite="lax", path="/")  # fmt: skip
    return response


@router.get("/v1/session", response_model=SessionRead)
def current_session(
    request: Request, session: SessionDep, settings: SettingsDep, principal: PrincipalDep
) -> SessionRead:
    """Who the caller is; for a console session, the person and the CSRF token its pages send back."""
    if principal.kind == "anonymous":
        raise AuthenticationRequiredError("sign in first")
    cookie = request.cookies.get(SESSION_COOKIE)
    found = people.person_of_session(session, cookie) if cookie and not _bearer(request) else None
    if found is None or cookie is None:
        return SessionRead(client_id=principal.id, scopes=sorted(principal.scopes), email=None, csrf_token=None,
                           expires_at=None)  # fmt: skip
    person, expires_at = found
    return SessionRead(
        client_id=principal.id,
        scopes=sorted(principal.scopes),
        email=person.email,
        csrf_token=people.csrf_token(settings.secret_key.get_secret_value(), cookie),
        expires_at=expires_at,
    )


@router.post("/signout", response_model=SignedOut)
def signout(request: Request, session: SessionDep, principal: PrincipalDep) -> Response:
    """End the console session (its CSRF token is required, as for every change)."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie and not _bearer(request):
        people.close_session(session, cookie)
    response = JSONResponse(SignedOut().model_dump())
    response.delete_cookie(SESSION_COOKIE, path="/", secure=True, httponly=True, samesite="lax")
    return response


def _bearer(request: Request) -> bool:
    return request.headers.get("authorization", "").lower().startswith("bearer ")
