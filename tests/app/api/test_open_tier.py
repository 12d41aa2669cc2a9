"""The open tier over HTTP: tables of a release, as cut and protected once, with their noise stated.

Most tests cut releases with no noise (``NoNoise``) to check the tables' arithmetic by hand; the noise
itself is OpenDP's (tested in ``test_releases``), and its guarantee against attackers in
``test_release_attacks``.
"""

import csv
import hashlib
import io
import math
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest
from sqlalchemy import func, select, text

from agentbank.db.models import AuditEvent, OpenRead, Participant, ReleaseTable, TableRequest
from agentbank.publication.breakdowns import BREAKDOWNS
from agentbank.publication.distributions import TOO_FEW
from agentbank.publication.privacy import ASKED_PER_ITEM, Budget, Scales
from agentbank.publication.releases import CUT_TASK
from agentbank.publication.weighting.targets import default_targets
from agentbank.publication.workload import STANDING
from tests.app.api.factories import answer, ask_tables, exact_release, population, release

URL = "/v1/open/instruments/gss/items/cappun/distribution"
ITEMS = ("cappun", "gunlaw", "grass")


def test_distribution_overall_and_by_sex(api):
    agents = population(api.session, [({"sex": 1}, 1)] * 12 + [({"sex": 2}, 1)] * 9 + [({"sex": 2}, 2)] * 15)
    cut = exact_release(api.session)
    headers = api.token("researcher", "aggregate:read")
    overall = api.client.get(URL, headers=headers).json()
    assert overall["total"] == 36 and overall["k"] == 10 and overall["release"] == cut.id
    by_code = {c["code"]: c for c in overall["cells"]}
    assert (by_code[1]["count"], by_code[1]["label"], by_code[1]["share"]) == (21, "favor", round(21 / 36, 4))
    assert by_code[2]["count"] == 15
    low, high = by_code[1]["interval"]
    assert low < 21 / 36 < high  # sampling and the noise the release states, together
    assert overall["protection"]["mu"] == 100.0 and 0 < overall["protection"]["sigma"] < 0.1

    by_sex = api.client.get(URL, params={"breakdowns": "sex"}, headers=headers).json()
    assert by_sex["total"] == overall["total"]  # the grand total, never the last group's n
    cells = {(c["group"]["sex"], c["code"]): c["count"] for c in by_sex["cells"]}
    assert cells[("male", 1)] == 12 and cells[("female", 1)] == 9 and cells[("female", 2)] == 15
    groups = {g["group"]["sex"]: g for g in by_sex["groups"]}
    assert groups["female"]["n"] == 24 and groups["unknown"]["n"] is None and groups["unknown"]["hidden"] == TOO_FEW
    assert cells[("unknown", 1)] is None
    body = str(by_sex)
    assert not any(str(a.id) in body for a in agents)


def test_a_group_under_k_is_hidden_whole_and_says_why(api):
    population(api.session, [({"sex": 1}, 1)] * 12 + [({"sex": 2}, 2)] * 9)
    exact_release(api.session)
    body = api.client.get(URL, params={"breakdowns": "sex"}, headers=api.token("r", "aggregate:read")).json()
    female = next(g for g in body["groups"] if g["group"]["sex"] == "female")
    assert female == {"group": {"sex": "female"}, "n": None, "deff": None, "hidden": TOO_FEW}
    assert all(c["count"] is None and c["share"] is None for c in body["cells"] if c["group"]["sex"] == "female")


def test_csv_and_audit(api):
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    cut = exact_release(api.session)
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
    assert [(r["sex"], r["code"], r["count"]) for r in table] == from_csv  # typed: a hidden count is null
    # Reading a published table uses no agent: no audit event, one count in the reader's access log.
    assert api.session.scalar(select(AuditEvent.id).order_by(AuditEvent.id.desc()).limit(1)) == before
    counts = api.client.app.state.open_reads.counts
    assert counts.pending() == 2 and counts.flush() == 2
    read = api.session.get(OpenRead, (headers["X-Client-Id"], datetime.now(UTC).date()))
    assert read is not None and (read.reads, read.not_modified) == (2, 0)


def test_bad_requests_get_clear_errors(api):
    headers = api.token("researcher", "aggregate:read")
    none_yet = api.client.get(URL, headers=headers)
    assert none_yet.status_code == 404 and none_yet.json()["error"]["code"] == "no_release"
    population(api.session, [({"sex": 1}, 1)] * 12)
    release(api.session)
    r = api.client.get(URL, params={"breakdowns": "shoe_size"}, headers=headers)
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"
    assert "shoe_size" in r.json()["error"]["message"]
    assert api.client.get(URL, params={"breakdowns": "sex,race,region"}, headers=headers).status_code == 422
    assert api.client.get(URL.replace("cappun", "nosuch"), headers=headers).status_code == 404
    assert api.client.get(URL.replace("cappun", "gunlaw"), headers=headers).status_code == 404  # nobody answered
    assert api.client.get(URL.replace("gss", "bfi44"), headers=headers).status_code == 404
    assert api.client.get(URL, headers=api.token("team", "individual:query")).status_code == 403


def varied_bank(api, n: int = 24):
    """``n`` agents of mixed sex and race, each answering three items."""
    demographics = [{"sex": 1 + i % 2, "race": 1 + i % 3} for i in range(n)]
    agents = population(api.session, [(d, 1 + i % 2) for i, d in enumerate(demographics)])
    for i, agent in enumerate(agents):
        answer(api.session, agent.id, "gunlaw", 1 + (i // 2) % 2)
        answer(api.session, agent.id, "grass", 1 + (i * 7 % 5) % 2)
    return agents


def tables(api, headers, breakdowns: str = "") -> dict[str, dict]:
    out = {}
    for item in ITEMS:
        r = api.client.get(URL.replace("cappun", item), params={"breakdowns": breakdowns}, headers=headers)
        assert r.status_code == 200, r.text
        out[item] = {(tuple(c["group"].values()), c["code"]): c["count"] for c in r.json()["cells"]}
        out[item]["total"] = r.json()["total"]
    return out


def test_a_withdrawal_reaches_the_open_tier_at_the_next_release_which_no_request_can_force(api):
    agents = varied_bank(api)
    ask_tables(api.session, ITEMS, ("sex", "race"))
    release(api.session)
    headers = api.token("researcher", "aggregate:read")
    admin = api.token("operator", "admin")
    before = {b: tables(api, headers, b) for b in ("", "sex", "race,sex")}
    leaver = api.session.get(Participant, agents[4].participant_id)
    me = api.participant_headers(leaver)
    assert api.client.post("/v1/participant/withdraw", json={"confirm": True}, headers=me).status_code == 200
    assert {b: tables(api, headers, b) for b in ("", "sex", "race,sex")} == before  # nothing moves between releases
    # An operator may ask a worker for a release over HTTP, as the policy allows; never force one.
    forced = api.client.post("/v1/admin/releases", json={"force": True}, headers=admin)
    assert forced.status_code == 422
    asked = api.client.post("/v1/admin/releases", json={}, headers=admin)
    assert asked.status_code == 202 and asked.json() == {"queued": True}
    queued = api.session.execute(text("SELECT args FROM procrastinate_jobs WHERE task_name = :t"), {"t": CUT_TASK})
    assert [row.args["force"] for row in queued] == [False]  # a worker cuts it, off the request
    request = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "release.request")).one()
    assert request.details == {"forced": False} and request.actor_id == admin["X-Client-Id"]


def test_a_table_the_release_lacks_is_queued_measured_at_the_next_cut_and_served_to_another_client(api):
    varied_bank(api, 24)
    first = exact_release(api.session, k=3)
    asker, other = api.token("researcher", "aggregate:read"), api.token("another", "aggregate:read")
    queued = api.client.get(URL, params={"breakdowns": "race,sex"}, headers=asker)
    assert queued.status_code == 202 and queued.headers["Retry-After"]
    body = queued.json()
    assert body["status"] == "queued" and body["breakdowns"] == ["sex", "race"] and body["release"] == first.id
    assert "next cut" in body["note"] and body["next_cut_after"]
    assert api.client.get(URL, params={"breakdowns": "sex,race"}, headers=other).json()["asks"] == 2  # one table
    request = api.session.get(TableRequest, ("gss", "cappun", "sex,race"))
    assert request is not None and request.first_release is None
    cut = exact_release(api.session, k=3)
    assert request.first_release == cut.id
    ready = api.client.get(URL, params={"breakdowns": "sex,race"}, headers=other)
    assert ready.status_code == 200
    body = ready.json()
    assert body["breakdowns"] == ["sex", "race"] and body["release"] == cut.id and body["total"] == 24
    assert sum(g["n"] for g in body["groups"] if g["n"] is not None) == 24
    assert body["protection"]["sigma_weighted"] is None  # asked tables are unweighted (the budget's choice)
    # Asked once, the table stays in the releases after: it does not vanish with the release it first showed in.
    later = exact_release(api.session, k=3)
    assert api.client.get(URL, params={"breakdowns": "sex,race"}, headers=asker).headers["X-Release"] == str(later.id)


def test_weighted_shares_with_their_design_effect_and_intervals(api):
    # 24 men (16 favour) and 16 women (4 favour); nobody's age, race, education or region is known.
    population(api.session, [({"sex": 1}, 1)] * 16 + [({"sex": 1}, 2)] * 8 + [({"sex": 2}, 1)] * 4
               + [({"sex": 2}, 2)] * 12)  # fmt: skip
    exact_release(api.session)
    headers = api.token("researcher", "aggregate:read")
    body = api.client.get(URL, headers=headers).json()
    male, female = default_targets().margins["sex"]["male"], default_targets().margins["sex"]["female"]
    # Raked to the GSS's sex margin: each man weighs male·40/24, each woman female·40/16 (within the cap).
    w_m, w_f = male * 40 / 24, female * 40 / 16
    by_code = {c["code"]: c for c in body["cells"]}
    assert by_code[1]["share"] == round(20 / 40, 4)
    assert by_code[1]["weighted_share"] == round((16 * w_m + 4 * w_f) / 40, 4)
    deff = 40 * (24 * w_m**2 + 16 * w_f**2) / 40**2
    assert body["groups"][0]["deff"] == round(deff, 3)
    low, high = by_code[1]["weighted_interval"]
    assert low < by_code[1]["weighted_share"] < high
    assert high - low > by_code[1]["interval"][1] - by_code[1]["interval"][0]  # weights and their noise cost
    assert body["weights"]["raked_on"] == ["sex", "age_band", "race", "education", "region"]
    assert "GSS 2022" in body["weights"]["source"] and body["weights"]["cap"] == 2.0
    assert body["missing"] == {"no answer": 0}
    rows = list(csv.DictReader(io.StringIO(api.client.get(URL, params={"format": "csv"}, headers=headers).text)))
    assert float(rows[0]["weighted_share"]) == by_code[1]["weighted_share"] and rows[0]["deff"]


def test_with_the_real_noise_the_intervals_hold_the_truth(api):
    # 400 agents; the truth of every shown share is known. Noise moves counts; intervals must say so.
    truth = [({"sex": 1 + i % 2, "race": 1 + i % 3, "degree": i % 5}, 1 + (i % 7 < 3)) for i in range(400)]
    population(api.session, truth)
    ask_tables(api.session, ["cappun"], ("sex", "race"))
    release(api.session)
    headers = api.token("researcher", "aggregate:read")
    held = shown = moved = 0
    for breakdowns in ("", "sex", "race", "education", "sex,race"):
        body = api.client.get(URL, params={"breakdowns": breakdowns}, headers=headers).json()
        dims = body["breakdowns"]
        for cell in body["cells"]:
            if cell["share"] is None:
                continue
            members = [code for demo, code in truth if all(_category(demo, d) == cell["group"][d] for d in dims)]
            exact = sum(1 for code in members if code == cell["code"])
            share = exact / len(members)
            shown += 1
            moved += cell["count"] != exact
            held += cell["interval"][0] <= share <= cell["interval"][1]
    assert moved > shown / 2  # the counts carry noise
    assert held / shown >= 0.9, (held, shown)


def _category(demographics: dict, breakdown: str) -> str:
    return BREAKDOWNS[breakdown].classify(demographics)


def test_the_new_breakdowns_and_a_release_cut_before_them(api):
    population(api.session, [({"sex": 1, "marital": m, "health": 2}, code) for m in (1, 5) for code in (1, 2)
                             for _ in range(12)])  # fmt: skip
    ask_tables(api.session, ["cappun"], ("marital",))
    cut = exact_release(api.session)
    headers = api.token("researcher", "aggregate:read")
    by_marital = api.client.get(URL, params={"breakdowns": "marital"}, headers=headers).json()
    n = {g["group"]["marital"]: g["n"] for g in by_marital["groups"]}
    assert n["married"] == 24 and n["never married"] == 24 and n["unknown"] is None
    # A release cut before the new breakdowns holds no category in them: refused, with when they show.
    cut.dimensions = [d for d in BREAKDOWNS if d != "health"]
    api.session.info["publish"](api.session, cut.id)  # published as such a release was
    r = api.client.get(URL, params={"breakdowns": "health"}, headers=headers)
    assert r.status_code == 422 and "next release" in r.json()["error"]["message"]
    assert api.client.get(URL, params={"breakdowns": "sex"}, headers=headers).status_code == 200


def test_a_release_is_read_like_a_file_with_an_etag_and_no_read_audited(api):
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    cut = exact_release(api.session)
    headers = api.token("researcher", "aggregate:read")
    before = api.session.scalar(select(func.count()).select_from(AuditEvent))
    first = api.client.get(URL, params={"breakdowns": "sex"}, headers=headers)
    etag = first.headers["ETag"]
    assert first.status_code == 200 and first.headers["X-Release"] == str(cut.id)
    assert first.headers["Cache-Control"] == "private, no-cache"  # the route names the current release: revalidate
    again = api.client.get(URL, params={"breakdowns": "sex"}, headers={**headers, "If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["ETag"] == etag
    assert api.client.get(URL, params={"breakdowns": "sex"}, headers=headers).content == first.content
    other = api.client.get(
        URL, params={"breakdowns": "sex", "format": "csv"}, headers={**headers, "If-None-Match": etag}
    )
    assert other.status_code == 200 and other.headers["ETag"] != etag  # another table, another validator
    # The file by its digest: the same bytes, kept forever by whoever may keep them.
    by_digest = api.client.get(first.headers["Content-Location"], headers=headers)
    assert by_digest.content == first.content and "immutable" in by_digest.headers["Cache-Control"]
    assert hashlib.sha256(by_digest.content).hexdigest().startswith(etag.strip('"'))
    assert api.session.scalar(select(func.count()).select_from(AuditEvent)) == before  # no read is a use
    # Authorization before any cache: a token without the scope gets nothing, an ETag or not.
    refused = api.client.get(URL, params={"breakdowns": "sex"},
                             headers={**api.token("team", "individual:query"), "If-None-Match": etag})  # fmt: skip
    assert refused.status_code == 403
    assert api.client.get(first.headers["Content-Location"]).status_code == 401


def test_each_member_sees_in_their_own_audit_log_every_release_they_are_in(api):
    agents = population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(6)])
    first, second = exact_release(api.session), exact_release(api.session)
    me = api.participant_headers(api.session.get(Participant, agents[0].participant_id))
    uses = api.client.get("/v1/participant/audit", headers=me).json()
    told = [u for u in uses if u["action"] == "release.member"]
    assert len(told) == 2 and {u["outcome"] for u in told} == {"aggregate"}
    assert {f"release {first.id}," in u["purpose"] for u in told} == {True, False}  # one event per release
    assert all(u["asked"] == {"instrument": ["gss"], "items": {"gss": 1}} for u in told)
    # One event per member and release, written with the cut; another member's is not theirs to see.
    events = api.session.scalars(select(AuditEvent).where(AuditEvent.action == "release.member")).all()
    assert len(events) == 2 * len(agents)
    assert {e.details["release"] for e in events if e.agent_id == agents[0].id} == {first.id, second.id}


def test_the_expected_error_of_each_kind_of_table_is_stated_before_any_table_is_asked_for(api):
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    release(api.session)  # mu 1, the bank's split of the budget
    body = api.client.get("/v1/open/expected-errors", headers=api.token("researcher", "aggregate:read")).json()
    kinds = {k["kind"]: k for k in body["kinds"]}
    scales = Scales.of(Budget(mu=1.0), len(STANDING))
    assert body["standing"] == list(STANDING) and body["asked_per_item"] == ASKED_PER_ITEM
    assert kinds["standing one-way"]["sigma"] == pytest.approx(scales.one_way, abs=1e-3)
    assert kinds["asked"]["in_every_release"] is False and kinds["standing one-way"]["in_every_release"]
    # A share near one half of a group of 100, from noise of about 5.2 counts: about 2.9 points expected.
    one_way = kinds["standing one-way"]["expected_error_points"]
    assert one_way["100"] == pytest.approx(
        100 * scales.one_way * math.sqrt(0.5) / 100 * math.sqrt(2 / math.pi), abs=0.01
    )
    assert one_way["50"] > one_way["100"] > one_way["1000"]


def test_a_release_with_the_real_noise_adds_up_across_its_tables(api):
    population(api.session, [({"sex": 1 + i % 2, "race": 1 + i % 3}, 1 + (i % 7 < 3)) for i in range(300)])
    ask_tables(api.session, ["cappun"], ("sex", "race"))
    cut = release(api.session)  # OpenDP's noise drawn, then made consistent
    stored = dict(api.session.execute(select(ReleaseTable.breakdowns, ReleaseTable.released).where(
        ReleaseTable.release_id == cut.id, ReleaseTable.item == "cappun")).all())  # fmt: skip
    assert set(stored) == {"", *STANDING, "sex,race"}
    totals = {}
    for key, body in stored.items():
        by_code: dict[int, int] = {}
        for _group, code, count, *_ in body["cells"]:
            assert count >= 0
            by_code[code] = by_code.get(code, 0) + count
        totals[key] = by_code
    assert all(t == totals[""] for t in totals.values())  # every table's totals per code: the overall table's
    assert any(body["measured"] != [c[2] for c in body["cells"]] for body in stored.values())  # noise was drawn
