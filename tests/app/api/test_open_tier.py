"""The open tier over HTTP: tables of a release, protected against counting, differencing and inference."""

import csv
import io
from pathlib import Path

import pyarrow.parquet as pq
from sqlalchemy import select, text

from agentbank.db.models import AuditEvent, Participant
from agentbank.instruments import load_instrument
from agentbank.open_tier.population import store_population_answer
from agentbank.open_tier.releases import TABLE_TASK, protect_table
from agentbank.open_tier.weighting.targets import default_targets
from tests.app.api.factories import population, release

URL = "/v1/open/instruments/gss/items/cappun/distribution"
ITEMS = ("cappun", "gunlaw", "grass")


def test_distribution_overall_and_by_sex(api):
    agents = population(api.session, [({"sex": 1}, 1)] * 12 + [({"sex": 2}, 1)] * 9 + [({"sex": 2}, 2)] * 15)
    cut = release(api.session)
    headers = api.token("researcher", "aggregate:read")
    overall = api.client.get(URL, headers=headers).json()
    assert overall["total"] == 36 and overall["k"] == 10 and overall["release"] == cut.id
    by_code = {c["code"]: c for c in overall["cells"]}
    assert (by_code[1]["count"], by_code[1]["label"], by_code[1]["share"]) == (21, "favor", round(21 / 36, 4))
    assert by_code[2]["count"] == 15

    by_sex = api.client.get(URL, params={"breakdowns": "sex"}, headers=headers).json()
    assert by_sex["total"] == overall["total"]  # the grand total, never the last group's n
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
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    cut = release(api.session)
    headers = api.token("researcher", "aggregate:read")
    before = api.session.scalar(select(AuditEvent.id).order_by(AuditEvent.id.desc()).limit(1))
    r = api.client.get(URL, params={"breakdowns": "sex", "format": "csv"}, headers=headers)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert r.headers["X-Release"] == str(cut.id)
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert {(row["sex"], row["code"], row["count"]) for row in rows} >= {("male", "1", "10"), ("male", "2", "10")}
    parquet = api.client.get(URL, params={"breakdowns": "sex", "format": "parquet"}, headers=headers)
    assert parquet.status_code == 200 and parquet.headers["content-type"] == "application/vnd.apache.parquet"
    table = pq.read_table(io.BytesIO(parquet.content)).to_pylist()
    from_csv = [(r["sex"], int(r["code"]), int(r["count"]) if r["count"] else None) for r in rows]
    assert [(r["sex"], r["code"], r["count"]) for r in table] == from_csv  # typed: a suppressed count is null
    csv_read = AuditEvent.details["format"].astext == "csv"
    event = api.session.scalars(
        select(AuditEvent).where(AuditEvent.id > before, AuditEvent.action == "aggregate.read", csv_read)
    ).one()
    assert event.tier == "open" and event.actor_id == headers["X-Client-Id"]
    assert event.details == {
        "instrument": "gss", "item": "cappun", "breakdowns": ["sex"], "format": "csv", "release": cut.id,
    }  # fmt: skip


def test_bad_requests_get_clear_errors(api):
    headers = api.token("researcher", "aggregate:read")
    none_yet = api.client.get(URL, headers=headers)
    assert none_yet.status_code == 404 and none_yet.json()["error"]["code"] == "no_release"
    population(api.session, [({"sex": 1}, 1)] * 3)
    release(api.session)
    r = api.client.get(URL, params={"breakdowns": "shoe_size"}, headers=headers)
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"
    assert "shoe_size" in r.json()["error"]["message"]
    assert api.client.get(URL, params={"breakdowns": "sex,race,region"}, headers=headers).status_code == 422
    assert api.client.get(URL.replace("cappun", "nosuch"), headers=headers).status_code == 404
    assert api.client.get(URL.replace("cappun", "gunlaw"), headers=headers).status_code == 404  # nobody answered
    assert api.client.get(URL.replace("gss", "bfi44"), headers=headers).status_code == 404
    assert api.client.get(URL, headers=api.token("team", "individual:query")).status_code == 403


def varied_bank(api, n: int = 13):
    """``n`` agents of mixed sex and race, each answering three items."""
    demographics = [{"sex": 1 + i % 2, "race": 1 + i % 3} for i in range(n)]
    agents = population(api.session, [(d, 1 + i % 2) for i, d in enumerate(demographics)])
    for i, agent in enumerate(agents):
        store_population_answer(api.session, agent.id, "gss", "gunlaw", 1 + (i // 2) % 2)
        store_population_answer(api.session, agent.id, "gss", "grass", 1 + (i * 7 % 5) % 2)
    return agents


def tables(api, headers, breakdowns: str = "") -> dict[str, dict]:
    out = {}
    for item in ITEMS:
        r = api.client.get(URL.replace("cappun", item), params={"breakdowns": breakdowns}, headers=headers)
        assert r.status_code == 200, r.text
        out[item] = {(tuple(c["group"].values()), c["code"]): c["count"] for c in r.json()["cells"]}
        out[item]["total"] = r.json()["total"]
    return out


def test_a_withdrawal_cannot_be_read_off_tables_fetched_before_and_after(api):
    agents = varied_bank(api)
    release(api.session, k=2)  # a small k, so counts that would move are shown
    headers = api.token("researcher", "aggregate:read")
    admin = api.token("operator", "admin")
    before = {b: tables(api, headers, b) for b in ("", "sex")}
    leaver = api.session.get(Participant, agents[4].participant_id)
    me = api.participant_headers(leaver)
    assert api.client.post("/v1/participant/withdraw", json={"confirm": True}, headers=me).status_code == 200
    after = {b: tables(api, headers, b) for b in ("", "sex")}
    # The attack: a count that dropped by one is the leaver's answer. Nothing moved, nothing is learned.
    learned = {
        (b, item, key) for b in before for item in ITEMS for key, count in before[b][item].items()
        if count is not None and after[b][item][key] is not None and count - after[b][item][key] == 1
    }  # fmt: skip
    assert learned == set()
    assert before == after
    # And no new release can isolate the one who left.
    refused = api.client.post("/v1/admin/releases", json={}, headers=admin)
    assert refused.status_code == 409 and "1 agent(s) left" in refused.json()["error"]["message"]


def test_no_groups_answer_follows_from_a_released_zero(api):
    # The shape found on the bank: race=black's three members all answered 2; count-only suppression
    # released black/code 1 as 0 beside the hidden code 2, which told their answer.
    answers = [({"race": 1}, 1)] * 2 + [({"race": 1}, 2)] * 4 + [({"race": 2}, 2)] * 3
    answers += [({"race": 3}, 1)] + [({"race": 3}, 2)] * 2
    population(api.session, answers)
    release(api.session)
    headers = api.token("researcher", "aggregate:read")
    body = api.client.get(URL, params={"breakdowns": "race"}, headers=headers).json()
    codes = {c["code"] for c in body["cells"]}
    for group in body["groups"]:
        if group["n"] == 0:
            continue
        shown = {c["code"]: c["count"] for c in body["cells"] if c["group"] == group["group"]}
        possible = {code for code in codes if shown[code] != 0}
        assert len(possible) > 1, (group, shown)


def test_a_two_way_table_is_protected_off_the_request_path_once(api):
    varied_bank(api, 24)
    cut = release(api.session, k=3)
    headers = api.token("researcher", "aggregate:read")
    first = api.client.get(URL, params={"breakdowns": "race,sex"}, headers=headers)
    assert first.status_code == 202 and first.headers["Retry-After"] == "5"
    assert first.json() == {"status": "preparing", "release": cut.id, "retry_after": 5}
    assert api.client.get(URL, params={"breakdowns": "sex,race"}, headers=headers).status_code == 202
    (args,) = api.session.execute(
        text("SELECT args FROM procrastinate_jobs WHERE task_name = :t AND status = 'todo'"), {"t": TABLE_TASK}
    ).scalars()  # one task, however often it was asked for
    protect_table(api.session, load_instrument("gss", Path(".")), args["release_id"], args["item"], args["breakdowns"])
    ready = api.client.get(URL, params={"breakdowns": "sex,race"}, headers=headers).json()
    overall = api.client.get(URL, headers=headers).json()
    assert ready["breakdowns"] == ["sex", "race"] and ready["total"] == overall["total"] == 24
    known = [g["n"] for g in ready["groups"] if g["n"] is not None]
    assert sum(known) <= 24


def test_weighted_shares_with_their_design_effect_and_intervals(api):
    # 30 men (20 favour) and 10 women (2 favour); nobody's age, race, education or region is known.
    population(api.session, [({"sex": 1}, 1)] * 20 + [({"sex": 1}, 2)] * 10 + [({"sex": 2}, 1)] * 2
               + [({"sex": 2}, 2)] * 8)  # fmt: skip
    release(api.session)
    headers = api.token("researcher", "aggregate:read")
    body = api.client.get(URL, headers=headers).json()
    male, female = default_targets().margins["sex"]["male"], default_targets().margins["sex"]["female"]
    # Raked to the GSS's sex margin: each man weighs male·40/30, each woman female·40/10.
    by_code = {c["code"]: c for c in body["cells"]}
    assert by_code[1]["share"] == round(22 / 40, 4)
    assert by_code[1]["weighted_share"] == round(20 / 30 * male + 2 / 10 * female, 3)
    w_m, w_f = male * 40 / 30, female * 40 / 10
    deff = 40 * (30 * w_m**2 + 10 * w_f**2) / 40**2
    assert body["groups"][0]["deff"] == round(deff, 2)
    low, high = by_code[1]["weighted_interval"]
    assert low < by_code[1]["weighted_share"] < high
    assert high - low > by_code[1]["interval"][1] - by_code[1]["interval"][0]  # unequal weights cost precision
    assert body["weights"]["raked_on"] == ["sex", "age_band", "race", "education", "region"]
    assert "GSS 2022" in body["weights"]["source"]
    assert body["missing"] == {"no answer": 0}
    rows = list(csv.DictReader(io.StringIO(api.client.get(URL, params={"format": "csv"}, headers=headers).text)))
    assert float(rows[0]["weighted_share"]) == by_code[1]["weighted_share"] and rows[0]["deff"]


def test_the_new_breakdowns_and_a_release_cut_before_them(api):
    population(api.session, [({"sex": 1, "marital": m, "health": 2}, code) for m in (1, 5) for code in (1, 2)
                             for _ in range(12)])  # fmt: skip
    cut = release(api.session)
    headers = api.token("researcher", "aggregate:read")
    by_marital = api.client.get(URL, params={"breakdowns": "marital"}, headers=headers).json()
    n = {g["group"]["marital"]: g["n"] for g in by_marital["groups"]}
    assert n["married"] == 24 and n["never married"] == 24 and n["unknown"] == 0
    # A release cut before the new breakdowns holds no category in them: refused, with when they show.
    earlier = '["sex", "age_band", "race", "education", "region", "party", "ideology"]'
    api.session.execute(
        text("UPDATE releases SET dimensions = CAST(:d AS jsonb) WHERE id = :id"), {"d": earlier, "id": cut.id}
    )
    r = api.client.get(URL, params={"breakdowns": "health"}, headers=headers)
    assert r.status_code == 422 and "next release" in r.json()["error"]["message"]
    assert api.client.get(URL, params={"breakdowns": "sex"}, headers=headers).status_code == 200
