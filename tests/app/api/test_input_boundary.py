"""Values parsed at the edge: a time without a zone in any body, an integer beyond 64 bits (or beyond the
column's range) in any path, query or body, a body nested without end or with a number no double holds:
each a 4xx naming the field, never a 500."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.fuzzing import BODIES, KINDS, Path, _fill, _put, _resolve, _who

# Beyond 64 bits, the first value beyond PostgreSQL's bigint and integer, and far below zero.
HUGE = [2**70, 2**63, 2**31, -(2**70)]


def fields(schema: dict[str, Any], components: dict[str, Any], wanted: Callable[[dict[str, Any]], bool],
           path: Path = (), kind: str | None = None) -> Iterator[tuple[Path, str | None]]:  # fmt: skip
    """(path, the job kind it belongs to) of every value of a body of ``schema`` that ``wanted`` picks."""
    schema = _resolve(schema, components)
    if wanted(schema):
        yield path, kind
        return
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get("allOf", []):
        branch = _resolve(branch, components)
        const = branch.get("properties", {}).get("kind", {}).get("const")
        yield from fields(branch, components, wanted, path, const or kind)
    if schema.get("type") == "array" and "items" in schema:
        yield from fields(schema["items"], components, wanted, (*path, 0), kind)
    for name, field in schema.get("properties", {}).items():
        yield from fields(field, components, wanted, (*path, name), kind)


def _is_integer(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "integer"


def _is_time(schema: dict[str, Any]) -> bool:
    return schema.get("format") == "date-time"


def _bodies(api, world, wanted) -> Iterator[tuple[str, str, Path, Any, dict[str, str]]]:
    """(method, url, path in the body, a valid body, headers) for every field ``wanted`` picks."""
    document = api.client.app.openapi()
    components = document["components"]["schemas"]
    for template, operations in document["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if content is None:
                continue
            url = template.format(**world["path"])
            headers = {**_who(template, world), "Idempotency-Key": "boundary", "Content-Type": "application/json"}
            for path, kind in fields(content["schema"], components, wanted):
                base = KINDS[kind] if kind else BODIES[(method.upper(), template)]
                yield method.upper(), url, path, _fill(base, world), headers


@pytest.fixture
def study(api, world):
    """A real study in the paths, so a body reaches the study's own rows."""
    body = {"name": "Boundary", "target_size": 10, "expires_at": "2099-01-01T00:00:00Z"}
    created = api.client.post("/v1/studies", json=body, headers=world["client"])
    assert created.status_code == 201, created.text
    world["path"]["study_id"] = created.json()["id"]
    return created.json()["id"]


def test_a_study_expiring_without_a_time_zone_is_refused_naming_expires_at(api, world):
    body = {"name": "Naive", "target_size": 10, "expires_at": "2099-01-01T00:00:00"}
    r = api.client.post("/v1/studies", json=body, headers=world["client"])
    assert r.status_code == 422, r.text
    assert r.json()["error"]["message"].startswith("expires_at:"), r.text


def test_every_time_in_every_body_needs_a_time_zone(api, world, study):
    tried = []
    for method, url, path, body, headers in _bodies(api, world, _is_time):
        r = api.client.request(method, url, content=json.dumps(_put(body, path, "2099-01-01T00:00:00")),
                               headers=headers)  # fmt: skip
        where = ".".join(str(p) for p in path)
        assert r.status_code == 422, (method, url, where, r.status_code, r.text[:200])
        assert where in r.json()["error"]["message"], (url, where, r.text)
        tried.append(where)
    assert len(tried) >= 2  # a study's expiry and an approval's


def test_a_huge_integer_in_any_body_is_refused_plainly(api, world, study):
    tried = 0
    for method, url, path, body, headers in _bodies(api, world, _is_integer):
        where = ".".join(str(p) for p in path)
        for value in HUGE:
            r = api.client.request(method, url, content=json.dumps(_put(body, path, value)), headers=headers)
            assert r.status_code < 500, (method, url, where, value, r.text[:200])
            if value == 2**70:
                assert 400 <= r.status_code < 500, (method, url, where, r.status_code, r.text[:200])
            tried += 1
    assert tried >= 8 * len(HUGE)


def test_revoking_an_invitation_numbered_beyond_the_column_is_refused(api, world, study):
    url = f"/v1/studies/{study}/revocations"
    for number in (2**70, 2**63, 2**31):
        r = api.client.post(url, json={"invitations": [number]}, headers=world["client"])
        assert r.status_code == 422 and r.json()["error"]["message"].startswith("invitations.0:"), r.text
    assert api.client.post(url, json={"invitations": [2**31 - 1]}, headers=world["client"]).status_code == 200


def test_a_huge_integer_in_any_path_or_query_is_refused_plainly(api, world, study):
    document = api.client.app.openapi()
    components = document["components"]["schemas"]
    tried = 0
    for template, operations in document["paths"].items():
        for method, operation in operations.items():
            body = BODIES.get((method.upper(), template))
            content = json.dumps(_fill(body, world)) if body else None
            headers = {**_who(template, world), "Idempotency-Key": "boundary", "Content-Type": "application/json"}
            for parameter in operation.get("parameters", []):
                schema = _resolve(parameter.get("schema", {}), components)
                if "integer" not in [schema.get("type"), *(b.get("type") for b in schema.get("anyOf", []))]:
                    continue
                for value in HUGE:
                    path, query = dict(world["path"]), {}
                    (path if parameter["in"] == "path" else query)[parameter["name"]] = str(value)
                    url = template.format(**path)
                    r = api.client.request(method.upper(), url, params=query, content=content, headers=headers)
                    assert r.status_code < 500, (method, template, parameter["name"], value, r.text[:200])
                    if value == 2**70:
                        assert 400 <= r.status_code < 500, (method, template, parameter["name"], r.status_code)
                    tried += 1
    assert tried >= 8 * len(HUGE)
    r = api.client.post(f"/v1/projects/{world['path']['project_id']}/notices/{2**70}/read", headers=world["client"])
    assert r.status_code == 422 and "notice_id" in r.json()["error"]["message"], r.text


def test_a_body_nested_without_end_or_holding_no_double_is_refused(api, world):
    url, headers = "/v1/participant/battery/answers/gss:cappun", {**world["participant"],
                                                                   "Content-Type": "application/json"}  # fmt: skip
    for raw in (b'{"wave": 1, "value": 1e999}', b'{"wave": 1, "value": -1e999}', b'{"wave": 1e999, "value": 1}',
                b'{"wave": 1, "value": 1' + b"0" * 5000 + b"}", b'{"wave": 1, "value": ' + b"[" * 20_000 + b"]" * 20_000
                + b"}"):  # fmt: skip
        r = api.client.put(url, content=raw, headers=headers)
        assert 400 <= r.status_code < 500, (raw[:40], r.status_code, r.text[:200])
        assert "error" in r.json()
