"""Hostile bytes in every header the API reads and in every text field of every body: a 4xx, never a 500.

Every route of the OpenAPI schema is called with each header it reads (Authorization, also as Bearer
and Basic, Idempotency-Key, Content-Type) and with the usual ones it does not (Cookie, X- headers),
set to a lone surrogate, invalid or overlong UTF-8, a NUL, Latin-1 letters or a 20 kB value; then
every JSON body is sent with each of its text fields broken the same ways, and the OAuth2 forms with
broken fields. A route or a body missing from the tables below fails the test, so none ships unfuzzed.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.fuzzing import BODIES, _fill, _who, with_each_text_broken

SURROGATE = "\ud800".encode("utf-8", "surrogatepass")
BAD_BYTES = {
    "a lone surrogate": SURROGATE,
    "invalid UTF-8": b"\xff\xfe\xc3(",
    "overlong UTF-8": b"\xc0\xaf\xe0\x80\xaf",
    "a NUL": b"a\x00b",
    "Latin-1 letters": "\u00e9\u00e8\u00ff".encode("latin-1"),
    "a 20 kB value": b"x" * 20_000,
}
# What the API reads, then headers it does not read (sent together): none may break a request either.
HEADERS = ["Authorization", "Authorization: Bearer", "Authorization: Basic", "Idempotency-Key", "Content-Type",
           "Cookie, X-Client-Id, X-Forwarded-For, X-Request-Id, Accept, User-Agent"]  # fmt: skip

FORMS = {
    "/oauth/token": {"grant_type": "client_credentials", "scope": "aggregate:read", "client_id": "{client_id}",
                     "client_secret": "{client_secret}"},
    "/oauth/revoke": {"token": "some-token", "token_type_hint": "access_token", "client_id": "{client_id}",
                      "client_secret": "{client_secret}"},
}  # fmt: skip


def operations(api) -> list[tuple[str, str, bool, bool]]:
    """(method, path template, takes JSON, takes a form) of every operation in the schema."""
    found = []
    for path, methods in api.client.app.openapi()["paths"].items():
        for method, operation in methods.items():
            content = operation.get("requestBody", {}).get("content", {})
            found.append(
                (method.upper(), path, "application/json" in content, "application/x-www-form-urlencoded" in content)
            )
    return found


def _headers(name: str, bad: bytes) -> dict[str, bytes]:
    if name.startswith("Authorization: "):
        return {"Authorization": name.split(": ")[1].encode() + b" " + bad}
    return {header: bad for header in name.split(", ")}


def _ok(response, what) -> None:
    assert 400 <= response.status_code < 500 or response.status_code < 300, (what, response.status_code)
    assert response.status_code < 500, (what, response.text[:300])


def test_every_route_with_every_header_broken(api, world):
    tried = 0
    for method, template, takes_json, takes_form in operations(api):
        if takes_json:
            assert (method, template) in BODIES, f"add a valid body for {method} {template}"
        if takes_form:
            assert method == "POST" and template in FORMS, f"add the form of {method} {template}"
        url = template.format(**world["path"])
        body = json.dumps(_fill(BODIES.get((method, template), {}), world)).encode() if takes_json else None
        for name in HEADERS:
            for label, bad in BAD_BYTES.items():
                broken = _headers(name, bad)
                headers: dict[str, Any] = {**_who(template, world), "Content-Type": "application/json",
                                           "Idempotency-Key": f"fuzz-{tried}"}  # fmt: skip
                headers = {k: v for k, v in headers.items() if k.lower() not in {b.lower() for b in broken}}
                headers.update(broken)
                response = api.client.request(method, url, content=body, headers=headers)
                _ok(response, (method, template, name, label))
                tried += 1
    assert tried >= 35 * len(HEADERS) * len(BAD_BYTES)


def _broken_json(body: Any, bad: bytes) -> list[bytes]:
    """``body`` once per text field, that field replaced by ``bad`` (raw bytes inside the JSON string)."""
    marker = "\ue000broken\ue000"
    out = []
    for broken in with_each_text_broken(body):
        encoded = json.dumps(broken, ensure_ascii=False).replace("\ud800", marker)
        out.append(encoded.encode("utf-8").replace(marker.encode(), bad.replace(b"\x00", b"\\u0000")))
    return out


def test_every_text_field_of_every_body_broken(api, world):
    tried = 0
    for (method, template), body in BODIES.items():
        url = template.format(**world["path"])
        for label, bad in {**BAD_BYTES, "an escaped lone surrogate": b"\\ud800"}.items():
            for content in _broken_json(_fill(body, world), bad):
                headers = {**_who(template, world), "Content-Type": "application/json", "Idempotency-Key": f"b{tried}"}
                response = api.client.request(method, url, content=content, headers=headers)
                _ok(response, (method, template, label, content[:120]))
                tried += 1
    assert tried >= 15 * (len(BAD_BYTES) + 1)  # every text field of the ten bodies


def test_every_form_field_broken(api, world):
    from urllib.parse import quote_from_bytes

    tried = 0
    for path, form in FORMS.items():
        for field in form:
            for label, bad in BAD_BYTES.items():
                fields = {k: v.encode() for k, v in form.items()}
                fields[field] = bad
                content = "&".join(f"{k}={quote_from_bytes(v)}" for k, v in fields.items())
                response = api.client.post(
                    path, content=content, headers={"Content-Type": "application/x-www-form-urlencoded"}
                )
                _ok(response, (path, field, label))
                tried += 1
    assert tried == sum(len(f) for f in FORMS.values()) * len(BAD_BYTES)
