"""Console sessions: a person linked to a client acts as it through an HTTP-only cookie, and every
change they make must carry the session's CSRF token."""

import uuid

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from agentbank.access import people
from agentbank.access.clients import create_client, revoke_client
from agentbank.core.errors import ConflictError, PermissionDeniedError
from agentbank.db.models import AuditEvent
from app.api import create_app
from tests.app.api.conftest import OPERATOR
from tests.support.consoles import signed_in

WITHHELD = "/v1/review/withheld/1"


def test_a_session_acts_as_its_client_and_changes_need_the_csrf_token(api):
    client, cookie, token = signed_in(api)
    me = api.client.get("/v1/session", headers=cookie).json()
    assert me["client_id"] == client.client_id and me["email"] == "ada@example.org" and me["scopes"] == ["review"]
    assert me["expires_at"]
    assert me["csrf_token"] == people.csrf_token(api.bank.settings.secret_key.get_secret_value(), token)
    assert api.client.get("/v1/review/withheld", headers=cookie).status_code == 200
    # A change without the CSRF token is refused before anything runs; with it, it reaches the route.
    body = {"decision": "release"}
    refused = api.client.post(WITHHELD, json=body, headers=cookie)
    assert refused.status_code == 403 and "CSRF" in refused.json()["error"]["message"]
    wrong = api.client.post(WITHHELD, json=body, headers={**cookie, "X-CSRF-Token": "0" * 64})
    assert wrong.status_code == 403
    allowed = api.client.post(WITHHELD, json=body, headers={**cookie, "X-CSRF-Token": me["csrf_token"]})
    assert allowed.status_code == 404  # past the CSRF check: there is no withheld answer 1
    # Scopes are the client's: a reviewer's session may not read the open tier.
    assert api.client.get("/v1/open/instruments", headers=cookie).status_code == 403
    opened = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "session.open")).all()
    assert opened[-1].actor_id == client.client_id


def test_signing_out_and_revoking_the_client_end_the_session(api):
    client, cookie, _ = signed_in(api)
    csrf = api.client.get("/v1/session", headers=cookie).json()["csrf_token"]
    assert api.client.post("/signout", headers=cookie).status_code == 403  # signing out is a change too
    out = api.client.post("/signout", headers={**cookie, "X-CSRF-Token": csrf})
    assert out.status_code == 200 and "agentbank_session=" in out.headers["set-cookie"]
    assert api.client.get("/v1/session", headers=cookie).status_code == 401
    _, second, _ = signed_in(api, "grace@example.org")
    revoke_client(api.session, api.client.get("/v1/session", headers=second).json()["client_id"], OPERATOR)
    assert api.client.get("/v1/session", headers=second).status_code == 401


def test_an_api_token_is_no_session_cookie(api):
    headers = api.token("researcher", "aggregate:read")
    token = headers["Authorization"].removeprefix("Bearer ")
    assert api.client.get("/v1/open/instruments", headers=headers).status_code == 200
    as_cookie = api.client.get("/v1/open/instruments", headers={"Cookie": f"agentbank_session={token}"})
    assert as_cookie.status_code == 401  # so a cookie never carries a token that skips the CSRF check


def test_who_may_sign_in(api):
    client = create_client(api.session, "team", ["projects:apply"], OPERATOR).client
    people.link_person(api.session, client.client_id, "Ada@Example.org", OPERATOR)
    assert people.person_for_claims(api.session, {"email": "ada@example.org", "email_verified": True})
    for claims, words in [
        ({"email": "ada@example.org"}, "not verified"),
        ({"email": "ada@example.org", "email_verified": False}, "not verified"),
        ({"email": "eve@example.org", "email_verified": True}, "may not sign in"),
        ({"sub": str(uuid.uuid4())}, "did not give an email"),
    ]:
        with pytest.raises(PermissionDeniedError, match=words):
            people.person_for_claims(api.session, claims)
    with pytest.raises(ConflictError):
        people.link_person(api.session, client.client_id, "ada@example.org", OPERATOR)
    revoke_client(api.session, client.client_id, OPERATOR)
    with pytest.raises(PermissionDeniedError):
        people.person_for_claims(api.session, {"email": "ada@example.org", "email_verified": True})


def test_signin_says_when_it_is_not_set_up(api):
    page = api.client.get("/signin")
    assert page.status_code == 404 and "not set up" in page.text


def test_an_unreachable_provider_is_said_in_words(api):
    settings = api.bank.settings.model_copy(
        update={"oidc_issuer": "http://127.0.0.1:9", "oidc_client_id": "console", "oidc_client_secret": None}
    )
    with TestClient(create_app(settings, api.bank), base_url="http://localhost") as client:
        page = client.get("/signin", follow_redirects=False)
    assert page.status_code == 502 and "cannot reach its identity provider" in page.text
