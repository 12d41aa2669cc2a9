"""The token endpoint (client credentials, RFC 6749 §4.4) and revocation (RFC 7009).

Their errors use OAuth2's own shape (``{"error": "invalid_client", ...}``), as the RFCs require.
"""

from __future__ import annotations

import base64

from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749.errors import InvalidClientError
from fastapi import APIRouter, Request
from starlette.responses import JSONResponse, Response

from agentbank.access.principals import SCOPES
from app.api.auth.server import BankAuthorizationServer, FormRequest
from app.api.deps import SessionDep, SettingsDep
from app.api.errors import OAuthErrorBody

router = APIRouter(
    tags=["oauth2"],
    responses={400: {"model": OAuthErrorBody}, 401: {"model": OAuthErrorBody}},
)


async def _form_request(request: Request) -> FormRequest:
    _check_basic(request.headers.get("authorization", ""))
    form = await request.form()
    # Starlette's headers are case-insensitive, as Authlib expects (it reads "Authorization").
    return FormRequest(request.method, str(request.url), request.headers, {k: str(v) for k, v in form.items()})


def _check_basic(header: str) -> None:
    """HTTP Basic credentials that are not base64 of UTF-8 ``id:secret`` are no client at all."""
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except ValueError:  # not base64 (binascii.Error), not ASCII (a header's Latin-1 letters), not UTF-8
        raise InvalidClientError(description="the Basic credentials are not base64-encoded UTF-8") from None
    if ":" not in decoded:
        raise InvalidClientError(description="the Basic credentials must be client_id:client_secret")


def _sent_basic(request: Request) -> bool:
    return request.headers.get("authorization", "").lower().startswith("basic ")


def _oauth_error(error: OAuth2Error) -> Response:
    body = {"error": error.error, "error_description": error.description}
    if isinstance(error, InvalidClientError):  # as the server answers every failed client authentication
        return JSONResponse(body, status_code=401, headers={"WWW-Authenticate": 'Basic realm="agentbank"'})
    return JSONResponse(body, status_code=400)


SCOPE_PATTERN = "^({0})( ({0}))*$".format("|".join(SCOPES))
# The bodies are read by Authlib from the raw form; these schemas document them for clients.
TOKEN_FORM = {
    "requestBody": {
        "required": True,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {
                    "type": "object",
                    "required": ["grant_type"],
                    "properties": {
                        "grant_type": {"type": "string", "enum": ["client_credentials"]},
                        "scope": {
                            "type": "string",
                            "pattern": SCOPE_PATTERN,
                            "description": "Space-separated; default: all of the client's",
                        },
                        "client_id": {"type": "string", "description": "Unless sent with HTTP Basic"},
                        "client_secret": {"type": "string", "description": "Unless sent with HTTP Basic"},
                    },
                }
            }
        },
    }
}
REVOKE_FORM = {
    "requestBody": {
        "required": True,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {
                    "type": "object",
                    "required": ["token"],
                    "properties": {
                        "token": {"type": "string"},
                        "token_type_hint": {"type": "string", "enum": ["access_token"]},
                        "client_id": {"type": "string"},
                        "client_secret": {"type": "string"},
                    },
                }
            }
        },
    }
}


@router.post("/oauth/token", summary="Issue a bearer token (client credentials)", openapi_extra=TOKEN_FORM)
async def token(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """Exchange a client id and secret (HTTP Basic or form) for an opaque bearer token."""
    server = BankAuthorizationServer(session, settings.token_lifetime_s, basic=_sent_basic(request))
    try:
        oauth_request = await _form_request(request)
    except OAuth2Error as error:  # plain http beyond loopback: credentials must travel over TLS
        return _oauth_error(error)
    return server.create_token_response(oauth_request)


@router.post("/oauth/revoke", summary="Revoke a token (RFC 7009)", openapi_extra=REVOKE_FORM)
async def revoke(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """Revoke one of the calling client's tokens; it is refused from the next request on."""
    server = BankAuthorizationServer(session, settings.token_lifetime_s, basic=_sent_basic(request))
    try:
        oauth_request = await _form_request(request)
    except OAuth2Error as error:
        return _oauth_error(error)
    return server.create_endpoint_response("revocation", oauth_request)
