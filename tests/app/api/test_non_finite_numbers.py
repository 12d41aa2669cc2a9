"""No request body takes NaN or an infinity: every numeric field of every JSON body the API documents, sent
NaN, Infinity and -Infinity (as Python's JSON writes them) and as the strings pydantic would read as
such, is refused with a 422 naming the field, never a 500 and never stored."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from tests.support.fuzzing import BODIES, KINDS, Path, _fill, _put, _resolve, _who

NON_FINITE = [math.nan, math.inf, -math.inf, "NaN", "Infinity", "-Infinity"]


def numeric_fields(schema: dict[str, Any], components: dict[str, Any], path: Path = (),
                   kind: str | None = None) -> Iterator[tuple[Path, str | None]]:  # fmt: skip
    """(path, the job kind it belongs to) of every number or integer a body of ``schema`` may hold."""
    schema = _resolve(schema, components)
    if schema.get("type") in ("number", "integer"):
        yield path, kind
        return
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get("allOf", []):
        branch = _resolve(branch, components)
        const = branch.get("properties", {}).get("kind", {}).get("const")
        yield from numeric_fields(branch, components, path, const or kind)
    if schema.get("type") == "array" and "items" in schema:
        yield from numeric_fields(schema["items"], components, (*path, 0), kind)
    for name, field in schema.get("properties", {}).items():
        yield from numeric_fields(field, components, (*path, name), kind)
    if isinstance(schema.get("additionalProperties"), dict):
        yield from numeric_fields(schema["additionalProperties"], components, (*path, "k"), kind)


def test_every_numeric_field_of_every_body_refuses_nan_and_infinity(api, world):
    document = api.client.app.openapi()
    components = document["components"]["schemas"]
    tried, fields = 0, set()
    for template, operations in document["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if content is None:
                continue
            url = template
            for name, value in world["path"].items():
                url = url.replace("{" + name + "}", str(value))
            headers = {**_who(template, world), "Idempotency-Key": "non-finite", "Content-Type": "application/json"}
            for path, kind in numeric_fields(content["schema"], components):
                fields.add((method.upper(), template, path))
                base = KINDS[kind] if kind else BODIES[(method.upper(), template)]
                for value in NON_FINITE:
                    body = json.dumps(_put(_fill(base, world), path, value)).encode()  # NaN as Python writes it
                    r = api.client.request(method.upper(), url, content=body, headers=headers)
                    tried += 1
                    where = ".".join(str(p) for p in path)
                    assert r.status_code == 422, (method, template, where, value, r.status_code, r.text[:200])
                    message = r.json()["error"]["message"]
                    assert where.split(".")[-1] in message, (template, where, value, message)
    print(f"non-finite numbers: {tried} requests over {len(fields)} numeric fields, each refused with a 422")
    assert ("PUT", "/v1/participant/battery/answers/{key}", ("value",)) in fields
    assert len(fields) >= 7  # waves, the value, redactions, quota, agents per job, an experiment's seed


def test_a_battery_answer_of_nan_or_infinity_is_refused_plainly(api, world):
    url = "/v1/participant/battery/answers/gss:cappun"
    for raw in (b'{"wave": 1, "value": NaN}', b'{"wave": 1, "value": Infinity}', b'{"wave": 1, "value": "-Infinity"}'):
        r = api.client.put(url, content=raw, headers={**world["participant"], "Content-Type": "application/json"})
        assert r.status_code == 422 and "finite" in r.json()["error"]["message"], r.text
    ok = api.client.put(url, json={"wave": 1, "value": 1}, headers=world["participant"])
    assert ok.status_code == 204, ok.text
