"""Repeated reads of a release over HTTP, served like the files they are: what a kept read still costs
(the token's check, which release is in force, its audit record), and what the keeping never changes:
every read authorized and audited, the same bytes for every client."""

import json
import re

from sqlalchemy import event, func, select

from agentbank.access.clients import create_client
from agentbank.db.models import AuditEvent
from app.api.limits import MemoryRateLimiter
from app.api.open import router
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


def _counting_route(monkeypatch) -> list[str]:
    """Each read the route itself answers (the framework's path), by its client."""
    routed: list[str] = []
    real = router.begin_read

    def counted(session, actor, *args):
        routed.append(actor.id)
        return real(session, actor, *args)

    monkeypatch.setattr(router, "begin_read", counted)
    return routed


def test_a_kept_read_is_answered_without_the_route_with_the_same_checks_and_audit(api, monkeypatch):
    """Once the route has built and kept a table, the same request is answered before the framework (kept.py):
    the same bytes, ETag and 304, the token checked and the read audited each time, exactly as the route
    audits it; a changed query, another scope or a revoked token still go to the route and its errors."""
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    exact_release(api.session)
    routed = _counting_route(monkeypatch)
    headers = api.token("researcher", "aggregate:read")
    first = api.client.get(URL, params={"breakdowns": "sex"}, headers=headers)
    again = api.client.get(URL, params={"breakdowns": "sex"}, headers=headers)
    conditional = api.client.get(
        URL, params={"breakdowns": "sex"}, headers={**headers, "If-None-Match": first.headers["ETag"]}
    )
    assert routed == [headers["X-Client-Id"]]  # the first built by the route, the others kept
    assert first.status_code == again.status_code == 200 and again.content == first.content
    assert again.headers["ETag"] == first.headers["ETag"] and again.headers["Cache-Control"] == "private, no-cache"
    assert again.headers["content-type"] == first.headers["content-type"]
    assert conditional.status_code == 304 and conditional.content == b""
    reads = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "aggregate.read")
                                .order_by(AuditEvent.id)).all()  # fmt: skip
    assert len(reads) == 3 and len({json.dumps(e.details, sort_keys=True) for e in reads}) == 1
    assert {(e.actor_kind, e.actor_id) for e in reads} == {("client", headers["X-Client-Id"])}

    # Anything the kept path does not know goes to the route: another query, a repeated parameter.
    assert api.client.get(URL, params={"breakdowns": "sex", "x": "1"}, headers=headers).content == first.content
    assert api.client.get(URL + "?breakdowns=sex&breakdowns=sex", headers=headers).content == first.content
    assert len(routed) == 3
    # A validator longer than the route takes is the route's to refuse, as before (422, nothing audited).
    long = api.client.get(URL, params={"breakdowns": "sex"}, headers={**headers, "If-None-Match": "x" * 401})
    assert long.status_code == 422 and len(routed) == 3
    # A token without the scope, or none at all: the route's own errors, nothing audited.
    other = api.token("reviewer", "review")
    refused = api.client.get(URL, params={"breakdowns": "sex"}, headers=other)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert api.client.get(URL, params={"breakdowns": "sex"}).status_code == 401
    count = api.session.scalar(select(func.count()).where(AuditEvent.action == "aggregate.read"))
    assert count == 5


def test_a_kept_read_of_an_older_release_goes_to_the_route(api, monkeypatch):
    """A new release is read from the next request on: the kept body of the last one is never served for it."""
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    exact_release(api.session)
    routed = _counting_route(monkeypatch)
    headers = api.token("researcher", "aggregate:read")
    first = api.client.get(URL, headers=headers)
    assert api.client.get(URL, headers=headers).headers["X-Release"] == first.headers["X-Release"]
    exact_release(api.session)
    newer = api.client.get(URL, headers={**headers, "If-None-Match": first.headers["ETag"]})
    assert newer.status_code == 200 and int(newer.headers["X-Release"]) == int(first.headers["X-Release"]) + 1
    assert len(routed) == 2
    details = api.session.scalars(select(AuditEvent.details).where(AuditEvent.action == "aggregate.read")
                                  .order_by(AuditEvent.id)).all()  # fmt: skip
    assert [d["release"] for d in details] == [int(first.headers["X-Release"])] * 2 + [int(newer.headers["X-Release"])]


def test_a_kept_read_counts_once_against_the_callers_rate_limit(api):
    """Whoever answers it, a read counts once, and a refused one is not audited."""
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    exact_release(api.session)
    headers = api.token("researcher", "aggregate:read")
    api.client.app.state.limiter = MemoryRateLimiter(3)
    statuses = [api.client.get(URL, headers=headers).status_code for _ in range(2)]  # built, then kept
    exact_release(api.session)  # the kept body is of the last release: the route answers, counted once
    statuses += [api.client.get(URL, headers=headers).status_code for _ in range(2)]
    assert statuses == [200, 200, 200, 429]
    limited = api.client.get(URL, headers=headers)
    assert limited.json()["error"]["code"] == "rate_limited" and int(limited.headers["Retry-After"]) >= 1
    assert api.session.scalar(select(func.count()).where(AuditEvent.action == "aggregate.read")) == 3
