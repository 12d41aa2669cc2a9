"""Labelled files: the open tier's tables and a job's results as Stata ``.dta`` and SPSS ``.sav``, read back
with their value and variable labels by pyreadstat, and by R's haven where R is installed."""

import io
import json
import shutil
import subprocess

import pandas as pd
import pyarrow.parquet as pq
import pyreadstat
import pytest
from sqlalchemy import select

from agentbank.db.models import AuditEvent
from agentbank.instruments import load_gss
from agentbank.instruments.exports import variable_names
from tests.app.api.factories import exact_release, population
from tests.app.api.protection import make_team
from tests.support.restricted import apply_and_approve, run_queued, survey

URL = "/v1/open/instruments/gss/items/cappun/distribution"
READERS = {"dta": pyreadstat.read_dta, "sav": pyreadstat.read_sav}
CAPPUN = {1: "favor", 2: "oppose"}
NO_R = "R's haven is not installed (Debian: r-base-core r-cran-haven r-cran-jsonlite)"


def read_back(tmp_path, content: bytes, fmt: str):
    path = tmp_path / f"table.{fmt}"
    path.write_bytes(content)
    return READERS[fmt](str(path))


def haven(tmp_path, content: bytes, fmt: str) -> dict:
    """What R's haven reads from the file: each column's values, value labels and variable label."""
    if shutil.which("Rscript") is None:
        pytest.skip(NO_R)
    path = tmp_path / f"for-r.{fmt}"
    path.write_bytes(content)
    script = (
        "if (!requireNamespace('haven', quietly = TRUE)) quit(status = 3);"
        f"t <- haven::read_{fmt}(commandArgs(TRUE)[1]);"
        "out <- lapply(t, function(c) list(values = as.vector(unclass(c)), "
        "labels = as.list(attr(c, 'labels')), label = attr(c, 'label')));"
        "cat(jsonlite::toJSON(out, auto_unbox = TRUE, null = 'null', na = 'null'))"
    )
    run = subprocess.run(["Rscript", "-e", script, str(path)], capture_output=True, text=True, timeout=120)
    if run.returncode == 3:
        pytest.skip(NO_R)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture
def released(api):
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)]
               + [({"sex": 1}, 1)] * 3)  # fmt: skip
    cut = exact_release(api.session)
    headers = api.token("researcher", "aggregate:read")
    table = api.client.get(URL, params={"breakdowns": "sex"}, headers=headers).json()
    return cut, headers, table


@pytest.mark.parametrize("fmt", ["dta", "sav"])
def test_an_open_tier_table_as_a_labelled_file(api, released, tmp_path, fmt):
    cut, headers, table = released
    before = api.session.scalar(select(AuditEvent.id).order_by(AuditEvent.id.desc()).limit(1))
    r = api.client.get(URL, params={"breakdowns": "sex", "format": fmt}, headers=headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == {"dta": "application/x-stata-dta", "sav": "application/x-spss-sav"}[fmt]
    assert r.headers["X-Release"] == str(cut.id) and r.headers["ETag"]

    frame, meta = read_back(tmp_path, r.content, fmt)
    assert list(frame.columns) == ["sex", "code", "label", "count", "share", "share_low", "share_high",
                                   "weighted_share", "weighted_low", "weighted_high", "deff", "noise_low",
                                   "noise_high", "sampling_low", "sampling_high"]  # fmt: skip
    assert meta.variable_value_labels["code"] == CAPPUN  # GSS codes with their labels
    question = load_gss().item("cappun").question
    label = meta.column_names_to_labels["code"]
    assert question.startswith(label.removesuffix("…")) and len(label.encode()) <= {"dta": 80, "sav": 255}[fmt]
    assert meta.column_names_to_labels["sex"] == "Sex" and "noise" in meta.column_names_to_labels["count"]
    assert f"release {cut.id}" in meta.file_label
    from_json = [(c["group"]["sex"], c["code"], c["count"]) for c in table["cells"]]
    from_file = [(s, int(c), None if pd.isna(n) else int(n)) for s, c, n in frame[["sex", "code", "count"]].values]
    assert from_file == from_json  # a hidden count is missing, never a zero
    assert any(n is None for *_, n in from_file)

    # A published file is read with no audit event: reading a release uses no agent.
    assert api.session.scalar(select(AuditEvent.id).order_by(AuditEvent.id.desc()).limit(1)) == before


@pytest.mark.parametrize("fmt", ["dta", "sav"])
def test_r_reads_the_open_tier_file_with_its_labels(api, released, tmp_path, fmt):
    _, headers, table = released
    r = api.client.get(URL, params={"breakdowns": "sex", "format": fmt}, headers=headers)
    read = haven(tmp_path, r.content, fmt)
    assert read["code"]["labels"] == {"favor": 1, "oppose": 2}
    assert "death" in read["code"]["label"].lower() and read["sex"]["label"] == "Sex"
    assert read["count"]["values"] == [c["count"] for c in table["cells"]]  # NA where hidden


def answered_job(api) -> tuple[dict, str, list]:
    team = make_team(api, turns=(6, 4))
    project = apply_and_approve(api, team)
    r = api.client.post(f"/v1/projects/{project}/jobs", json=survey(team, team["agents"]),
                        headers={**team["member"], "Idempotency-Key": "labelled"})  # fmt: skip
    assert r.status_code == 202, r.text
    assert run_queued(api, team) == 2
    results = api.client.get(f"/v1/jobs/{r.json()['id']}/results", headers=team["member"])
    assert results.status_code == 200, results.text
    return team, r.json()["id"], results.json()


def test_job_results_in_every_format_with_the_labels_of_their_codes(api, tmp_path):
    team, job_id, results = answered_job(api)
    gss = load_gss()
    for result in results:  # the JSON gives each coded answer's label beside its value
        for answer in result["answers"]:
            assert answer["label"] == gss.item(answer["key"]).label(answer["value"])
    values = {r["agent_id"]: {a["key"]: a["value"] for a in r["answers"]} for r in results}

    url = f"/v1/jobs/{job_id}/results"
    for fmt in ("dta", "sav"):
        r = api.client.get(url, params={"format": fmt}, headers=team["member"])
        assert r.status_code == 200, r.text
        assert r.headers["content-disposition"] == f'attachment; filename="job-{job_id}.{fmt}"'
        frame, meta = read_back(tmp_path, r.content, fmt)
        assert list(frame.columns) == ["agent_id", "status", "cappun", "gunlaw"]
        assert {row.agent_id: {"cappun": row.cappun, "gunlaw": row.gunlaw} for row in frame.itertuples()} == values
        assert meta.variable_value_labels["cappun"] == CAPPUN
        assert meta.variable_value_labels["gunlaw"] == {o.code: o.label for o in gss.item("gunlaw").options}
        assert "death penalty" in meta.column_names_to_labels["cappun"].lower()
        assert meta.file_label == f"agentbank job {job_id}"[:64]
    read = {fmt: api.client.get(url, params={"format": fmt}, headers=team["member"]) for fmt in ("csv", "parquet")}
    rows = pd.read_csv(io.StringIO(read["csv"].text))
    parquet = pq.read_table(io.BytesIO(read["parquet"].content))
    assert list(rows.columns) == parquet.column_names == ["agent_id", "status", "cappun", "gunlaw"]
    assert rows.to_dict("records") == parquet.to_pandas().to_dict("records")

    reads = api.session.scalars(
        select(AuditEvent).where(AuditEvent.action == "job.results.read").order_by(AuditEvent.id)
    ).all()
    assert [e.details["format"] for e in reads] == ["json", "dta", "sav", "csv", "parquet"]
    assert api.client.get(url, params={"format": "xlsx"}, headers=team["member"]).status_code == 422
    outsider = api.token("outsider", "individual:query")
    assert api.client.get(url, params={"format": "dta"}, headers=outsider).status_code == 404


def test_r_reads_a_job_results_file_with_its_labels(api, tmp_path):
    team, job_id, results = answered_job(api)
    r = api.client.get(f"/v1/jobs/{job_id}/results", params={"format": "dta"}, headers=team["member"])
    read = haven(tmp_path, r.content, "dta")
    assert read["cappun"]["labels"] == {"favor": 1, "oppose": 2}
    assert "death penalty" in read["cappun"]["label"].lower()
    by_agent = dict(zip(read["agent_id"]["values"], read["cappun"]["values"], strict=True))
    assert by_agent == {r["agent_id"]: r["answers"][0]["value"] for r in results}


def test_an_experiment_job_as_a_labelled_file_names_each_arm_and_item(api, tmp_path):
    from tests.app.api.test_experiment_jobs import SCHILKE, approve, experiment, submit

    team = make_team(api)
    project = approve(api, team, ["experiment"])
    job = submit(api, project, team["member"], experiment(team, seed=4), "x").json()["id"]
    assert run_queued(api, team) == 2
    results = api.client.get(f"/v1/jobs/{job}/results", headers=team["member"]).json()
    frame, meta = read_back(tmp_path, api.client.get(f"/v1/jobs/{job}/results", params={"format": "sav"},
                                                     headers=team["member"]).content, "sav")  # fmt: skip
    coded = [i for i in (*SCHILKE.outcomes, *SCHILKE.probes) if i.options]
    assert coded, "the experiment asks coded questions"
    names = variable_names([f"{arm.key}:{i.key}" for arm in SCHILKE.arms for i in (*SCHILKE.outcomes, *SCHILKE.probes)])
    assert set(names.values()) <= set(frame.columns) and len(set(names.values())) == len(names)
    for result in results:
        row = frame[frame["agent_id"] == result["agent_id"]].iloc[0]
        assert row["arms"] == ",".join(result["arms"])
        for answer in result["answers"]:
            column = names[answer["key"]]
            _, key = answer["key"].split(":")
            item = next(i for i in (*SCHILKE.outcomes, *SCHILKE.probes) if i.key == key)
            assert meta.column_names_to_labels[column] == item.question[:255] + (
                "…" if len(item.question) > 256 else ""
            )
            if item.options and not answer.get("withheld"):
                assert meta.variable_value_labels[column] == {o.code: o.label for o in item.options}
                assert answer["label"] == item.label(answer["value"]) and row[column] == answer["value"]
