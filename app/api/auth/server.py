"""OAuth2 for the bank on Authlib's framework-neutral server classes.

Authlib ships server integrations for Flask and Django only; this module adapts its
``AuthorizationServer`` to Starlette requests, with the client-credentials grant (RFC 6749 §4.4)
and token revocation (RFC 7009). Tokens are opaque and stored hashed (``agentbank.access.clients``).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from authlib.oauth2.rfc6749 import AuthorizationServer, ClientMixin, OAuth2Request, TokenMixin
from authlib.oauth2.rfc6749.errors import InvalidScopeError
from authlib.oauth2.rfc6749.grants import ClientCredentialsGrant
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from sqlalchemy.orm import Session
from starlette.responses import JSONResponse

from agentbank.access.clients import check_secret, find_client, find_token, revoke_token, store_token
from agentbank.access.principals import SCOPES
from agentbank.db.models import AccessToken, Client
from app.api.types import storable

AUTH_METHODS = ["client_secret_basic", "client_secret_post"]


class ClientAdapter(ClientMixin):
    """A stored client as Authlib sees it: confidential, client-credentials only."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def get_client_id(self) -> str:
        return self.client.client_id

    def get_default_redirect_uri(self) -> None:
        return None

    def get_allowed_scope(self, scope: str | None) -> str:
        allowed = self.client.scopes
        if not scope:
            return " ".join(allowed)
        return " ".join(s for s in scope.split() if s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return False

    def check_client_secret(self, client_secret: str) -> bool:
        return check_secret(client_secret, self.client.secret_hash)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in AUTH_METHODS

    def check_response_type(self, response_type: str) -> bool:
        return False

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "client_credentials"


class TokenAdapter(TokenMixin):
    """A stored token as Authlib's revocation endpoint sees it."""

    def __init__(self, row: AccessToken) -> None:
        self.row = row

    def check_client(self, client: ClientAdapter) -> bool:
        return self.row.client_pk == client.client.id

    def get_scope(self) -> str:
        return " ".join(self.row.scopes)

    def get_expires_in(self) -> int:
        return int((self.row.expires_at - self.row.issued_at).total_seconds())

    def is_expired(self) -> bool:
        return self.row.expires_at <= datetime.now(UTC)

    def is_revoked(self) -> bool:
        return self.row.revoked_at is not None


class FormRequest(OAuth2Request):
    """An OAuth2 request built from a Starlette request whose form was already read."""

    def __init__(self, method: str, uri: str, headers: Mapping[str, str], form: dict[str, str]) -> None:
        super().__init__(method, uri, headers=headers)
        self.payload = BasicOAuth2Payload(form)
        self._form = form

    @property
    def form(self) -> dict[str, str]:
        return self._form

    @property
    def args(self) -> dict[str, str]:
        return {}


class ClientCredentials(ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS

    def validate_token_request(self) -> None:
        super().validate_token_request()
        # RFC 6749 §5.2: asking for a scope the client was never granted is invalid_scope, not a
        # token that silently holds fewer scopes than asked for.
        asked = set((self.request.payload.scope or "").split())
        if not asked <= set(self.request.client.client.scopes):
            raise InvalidScopeError()


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = AUTH_METHODS

    def query_token(self, token_string: str, token_type_hint: str | None) -> TokenAdapter | None:
        if not storable(token_string):
            return None
        row = find_token(self.server.session, token_string)
        return TokenAdapter(row) if row is not None and row.client_pk is not None else None

    def revoke_token(self, token: TokenAdapter, request: FormRequest) -> None:
        revoke_token(self.server.session, token.row, request.client.client)


class BankAuthorizationServer(AuthorizationServer):
    """One per request: it works inside the request's database session (and so its transaction)."""

    def __init__(self, session: Session, lifetime_s: int, *, basic: bool = True) -> None:
        super().__init__(scopes_supported=list(SCOPES))
        self.session = session
        self.basic = basic  # whether the client sent its credentials with HTTP Basic
        self.register_grant(ClientCredentials)
        self.register_endpoint(Revocation)
        self.register_token_generator(
            "default",
            BearerTokenGenerator(
                access_token_generator=lambda **_: secrets.token_urlsafe(32), expires_generator=lifetime_s
            ),
        )

    def query_client(self, client_id: str) -> ClientAdapter | None:
        if not storable(client_id):  # no stored id holds such text, and PostgreSQL refuses it in a query
            return None
        client = find_client(self.session, client_id)
        return ClientAdapter(client) if client is not None else None

    def save_token(self, token: dict[str, Any], request: FormRequest) -> None:
        store_token(
            self.session,
            request.client.client,
            token["access_token"],
            token.get("scope", "").split(),
            token["expires_in"],
        )

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        return None

    def create_oauth2_request(self, request: FormRequest) -> FormRequest:
        return request

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> JSONResponse:
        # RFC 6749 §5.2 allows 401 for every failed client authentication; one status is simpler to handle.
        if status == 400 and isinstance(body, dict) and body.get("error") == "invalid_client":
            status = 401
        # The Basic challenge only answers Basic credentials (§5.2 requires it then): sent to a page that
        # posted its credentials in the form, it would open the browser's own password dialog.
        headers = [(k, v) for k, v in headers if k.lower() != "www-authenticate"]
        if status == 401 and self.basic:
            headers.append(("WWW-Authenticate", 'Basic realm="agentbank"'))
        return JSONResponse(body, status_code=status, headers=dict(headers))
