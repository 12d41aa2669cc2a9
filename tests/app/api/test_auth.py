"""OAuth2 client credentials and revocation, on Authlib, against the real token table."""

from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from agentbank.access.clients import create_client, revoke_client, token_hash
from agentbank.db.models import AccessToken, AuditEvent
from tests.app.api.conftest import OPERATOR


def get_token(api, client_id, secret, **form):
    return api.client.post("/oauth/token", data={"grant_type": "client_credentials", **form}, auth=(client_id, secret))


def test_token_is_opaque_stored_hashed_and_scoped(api):
    created = create_client(api.session, "team", ["aggregate:read", "projects:apply"], OPERATOR)
    r = get_token(api, created.client.client_id, created.secret, scope="aggregate:read")
    body = r.json()
    assert r.status_code == 200 and body["token_type"].lower() == "bearer" and body["scope"] == "aggregate:read"
    stored = api.session.scalars(select(AccessToken).where(AccessToken.client_pk == created.client.id)).one()
    assert stored.token_hash == token_hash(body["access_token"]) and body["access_token"] not in stored.token_hash
    headers = {"Authorization": f"Bearer {body['access_token']}"}
    assert api.client.get("/v1/open/instruments", headers=headers).status_code == 200
    assert api.client.post("/v1/projects", json={}, headers=headers).status_code == 403  # scope not granted
    issued = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "token.issue")).all()
    assert issued[-1].actor_id == created.client.client_id


def test_client_secret_in_form_also_works(api):
    created = create_client(api.session, "team", ["aggregate:read"], OPERATOR)
    r = api.client.post(
        "/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": created.client.client_id,
            "client_secret": created.secret,
        },
    )
    assert r.status_code == 200


def test_only_basic_credentials_are_answered_with_a_basic_challenge(api):
    """A browser shows its own password dialog on a Basic challenge: a page that posts the form must not get one."""
    created = create_client(api.session, "team", ["aggregate:read"], OPERATOR)
    basic = get_token(api, created.client.client_id, "wrong")
    assert basic.status_code == 401 and basic.headers["www-authenticate"].startswith("Basic")
    form = {"grant_type": "client_credentials", "client_id": created.client.client_id, "client_secret": "wrong"}
    posted = api.client.post("/oauth/token", data=form)
    assert posted.status_code == 401 and posted.json()["error"] == "invalid_client"
    assert "www-authenticate" not in posted.headers


def test_bad_credentials_and_grants_are_refused(api):
    created = create_client(api.session, "team", ["aggregate:read"], OPERATOR)
    assert get_token(api, created.client.client_id, "wrong").json()["error"] == "invalid_client"
    assert get_token(api, "cl_nobody", "x").status_code == 401
    r = api.client.post(
        "/oauth/token", data={"grant_type": "password"}, auth=(created.client.client_id, created.secret)
    )
    assert r.json()["error"] == "unsupported_grant_type"


def test_revocation_takes_effect_on_the_next_request(api):
    created = create_client(api.session, "team", ["aggregate:read"], OPERATOR)
    token = get_token(api, created.client.client_id, created.secret).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    assert api.client.get("/v1/open/instruments", headers=headers).status_code == 200
    r = api.client.post("/oauth/revoke", data={"token": token}, auth=(created.client.client_id, created.secret))
    assert r.status_code == 200
    refused = api.client.get("/v1/open/instruments", headers=headers)
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
    assert refused.json()["error"]["code"] == "unauthenticated"


def test_another_clients_token_cannot_be_revoked(api):
    alice = create_client(api.session, "alice", ["aggregate:read"], OPERATOR)
    bob = create_client(api.session, "bob", ["aggregate:read"], OPERATOR)
    token = get_token(api, alice.client.client_id, alice.secret).json()["access_token"]
    api.client.post("/oauth/revoke", data={"token": token}, auth=(bob.client.client_id, bob.secret))
    assert api.client.get("/v1/open/instruments", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def test_revoked_client_and_expired_tokens_are_refused(api):
    created = create_client(api.session, "team", ["aggregate:read"], OPERATOR)
    token = get_token(api, created.client.client_id, created.secret).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    api.session.execute(
        update(AccessToken).where(AccessToken.token_hash == token_hash(token))
        .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
    )  # fmt: skip
    assert api.client.get("/v1/open/instruments", headers=headers).status_code == 401
    token = get_token(api, created.client.client_id, created.secret).json()["access_token"]
    revoke_client(api.session, created.client.client_id, OPERATOR)
    assert api.client.get("/v1/open/instruments", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    assert get_token(api, created.client.client_id, created.secret).status_code == 401
