"""The open tier over HTTP: distributions with suppression, CSV, audit, and nothing individual."""

import csv
import io

from sqlalchemy import select

from agentbank.models import AuditEvent
from tests.app.api.factories import population

URL = "/v1/open/instruments/gss/items/cappun/distribution"


def test_distribution_overall_and_by_sex(api):
    agents = population(api.session, [({"sex": 1}, 1)] * 12 + [({"sex": 2}, 1)] * 9 + [({"sex": 2}, 2)] * 15)
    headers = api.token("researcher", "aggregate:read")
    overall = api.client.get(URL, headers=headers).json()
    assert overall["total"] == 36 and overall["k"] == 10
    by_code = {c["code"]: c for c in overall["cells"]}
    assert (by_code[1]["count"], by_code[1]["label"], by_code[1]["share"]) == (21, "favor", round(21 / 36, 4))
    assert by_code[2]["count"] == 15

    by_sex = api.client.get(URL, params={"breakdowns": "sex"}, headers=headers).json()
    cells = {(c["group"]["sex"], c["code"]): c["count"] for c in by_sex["cells"]}
    assert cells[("female", 1)] is None  # 9 agents: hidden
    # Overall code 1 is released (21), so the men's 12 must be hidden too, or 21 − 12 reveals the 9.
    assert cells[("male", 1)] is None
    totals = {g["group"]["sex"]: g["n"] for g in by_sex["groups"]}
    assert totals["female"] is None or cells[("female", 2)] is None  # else 24 − 15 reveals it
    assert all(c is None or c == 0 or c >= 10 for c in cells.values())
    body = str(by_sex)
    assert not any(str(a.id) in body for a in agents)


def test_csv_and_audit(api):
    population(api.session, [({"sex": 1}, 1)] * 10 + [({"sex": 2}, 2)] * 10)
    headers = api.token("researcher", "aggregate:read")
    before = api.session.scalar(select(AuditEvent.seq).order_by(AuditEvent.seq.desc()).limit(1))
    r = api.client.get(URL, params={"breakdowns": "sex", "format": "csv"}, headers=headers)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert {(row["sex"], row["code"], row["count"]) for row in rows} >= {("male", "1", "10"), ("female", "2", "10")}
    event = api.session.scalars(
        select(AuditEvent).where(AuditEvent.seq > before, AuditEvent.action == "aggregate.read")
    ).one()
    assert event.tier == "open" and event.actor_id == headers["X-Client-Id"]
    assert event.details == {"instrument": "gss", "item": "cappun", "breakdowns": ["sex"], "format": "csv"}


def test_bad_requests_get_clear_errors(api):
    headers = api.token("researcher", "aggregate:read")
    r = api.client.get(URL, params={"breakdowns": "shoe_size"}, headers=headers)
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"
    assert "shoe_size" in r.json()["error"]["message"]
    assert api.client.get(URL, params={"breakdowns": "sex,race,region"}, headers=headers).status_code == 422
    assert api.client.get(URL.replace("cappun", "nosuch"), headers=headers).status_code == 404
    assert api.client.get(URL.replace("gss", "bfi44"), headers=headers).status_code == 404
    assert api.client.get(URL, headers=api.token("team", "individual:query")).status_code == 403
