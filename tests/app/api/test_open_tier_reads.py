"""Repeated reads of a release over HTTP, served like the files they are: what a kept read still costs
(the token's check, which release is in force, its audit record), and what the keeping never changes:
every read authorized and audited, the same bytes for every client."""

import re

from sqlalchemy import event, select

from agentbank.access.clients import create_client
from agentbank.db.models import AuditEvent
from tests.app.api.conftest import OPERATOR
from tests.app.api.factories import exact_release, population

URL = "/v1/open/instruments/gss/items/cappun/distribution"


def test_a_kept_read_costs_three_statements_the_token_the_release_and_its_audit_record(api):
    """A repeated read, plain or conditional, runs the token's check (its client in the same query), which
    release is in force, and the read's audit record: nothing is fetched to answer a 304."""
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    exact_release(api.session)
    headers = api.token("researcher", "aggregate:read")
    first = api.client.get(URL, params={"breakdowns": "sex"}, headers=headers)  # built, then kept
    statements: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany) -> None:
        if statement.split()[0] in ("SELECT", "INSERT", "UPDATE", "DELETE"):
            statements.append(re.search(r"(?:FROM|INTO) (\w+)", statement).group(1))

    event.listen(api.bank.engine, "before_cursor_execute", seen)
    try:
        again = api.client.get(
            URL, params={"breakdowns": "sex"}, headers={**headers, "If-None-Match": first.headers["ETag"]}
        )
        plain = api.client.get(URL, params={"breakdowns": "sex"}, headers=headers)
    finally:
        event.remove(api.bank.engine, "before_cursor_execute", seen)
    assert again.status_code == 304 and plain.content == first.content
    assert statements == ["access_tokens", "releases", "audit_events"] * 2
    reads = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "aggregate.read")).all()
    assert len(reads) == 3  # every read audited, the kept ones included


def test_a_kept_body_is_the_same_for_every_client_and_names_none(api):
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    exact_release(api.session)
    alice, bob = api.token("alice", "aggregate:read"), api.token("bob", "aggregate:read")
    for fmt in ("json", "csv"):
        first = api.client.get(URL, params={"breakdowns": "sex", "format": fmt}, headers=alice)
        second = api.client.get(URL, params={"breakdowns": "sex", "format": fmt}, headers=bob)
        assert first.status_code == second.status_code == 200 and first.content == second.content
        for client_id in (alice["X-Client-Id"], bob["X-Client-Id"]):
            assert client_id.encode() not in second.content
    reads = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "aggregate.read")).all()
    assert sorted(e.actor_id for e in reads) == sorted([alice["X-Client-Id"], bob["X-Client-Id"]] * 2)


def test_a_304_is_refused_for_a_table_the_release_does_not_hold(api):
    """A validator sent back is the client's word: the read is answered 304 only for a table that exists."""
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    exact_release(api.session)
    headers = api.token("researcher", "aggregate:read")
    url = "/v1/open/instruments/gss/items/natspac/distribution"  # no agent of this release answered it
    r = api.client.get(url, headers={**headers, "If-None-Match": "*"})
    assert r.status_code == 404


def test_a_revoked_token_is_refused_its_kept_read_at_the_next_request(api):
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    exact_release(api.session)
    created = create_client(api.session, "researcher", ["aggregate:read"], OPERATOR)
    auth = (created.client.client_id, created.secret)
    token = api.client.post("/oauth/token", data={"grant_type": "client_credentials"}, auth=auth).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    first = api.client.get(URL, params={"breakdowns": "sex"}, headers=headers)  # built, then kept
    assert first.status_code == 200
    assert api.client.post("/oauth/revoke", data={"token": token}, auth=auth).status_code == 200
    for sent in (headers, {**headers, "If-None-Match": first.headers["ETag"]}):
        assert api.client.get(URL, params={"breakdowns": "sex"}, headers=sent).status_code == 401
