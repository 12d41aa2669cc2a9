"""The Python client against the live server (its own process, a worker process for the job): the open
tier as a DataFrame in GSS codes with labels, a job submitted once, waited for and read as a DataFrame."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pandas as pd
import pytest
from agentbank_client import BankClient, BankClientError, TableQueuedError

from agentbank.instruments import load_gss
from agentbank.publication.breakdowns import FIGURES
from tests.support.live_bank import seed_bank

pytestmark = pytest.mark.slow  # two processes of the bank


def test_the_client_reads_the_open_tier_and_runs_a_job(serve, fresh_database, tmp_path):
    bank = seed_bank(fresh_database, tmp_path / "server-data")
    server = serve()

    with BankClient(server.url, *bank["reader"]) as reader:
        assert "gss" in set(reader.instruments()["key"])
        table = reader.distribution("gss", "cappun", breakdowns=["sex"])
        assert list(table.columns) == ["sex", "code", "label", *FIGURES]
        shown = table["count"].notna()
        assert table.loc[shown, "weighted_share"].notna().all() and table.loc[~shown, "weighted_share"].isna().all()
        assert "GSS" in table.attrs["weights"]["source"]
        assert table.attrs["release"] >= 1 and "death penalty" in table.attrs["question"].lower()
        favor = table[(table["code"] == 1) & (table["label"] == "favor")]
        assert not favor.empty  # GSS codes with their labels
        assert isinstance(table["label"].dtype, pd.CategoricalDtype)
        assert list(table["label"].cat.categories) == [o.label for o in load_gss().item("cappun").options]
        assert table["count"].isna().any() or table["count"].sum() <= 18  # hidden cells stay <NA>
        with pytest.raises(TableQueuedError, match="next cut") as queued:  # a table nobody asked for before
            reader.distribution("gss", "cappun", breakdowns=["sex", "race"])
        assert queued.value.release == table.attrs["release"]
        with pytest.raises(BankClientError) as refused:
            reader.submit(bank["project"], {"kind": "survey", "instrument": "gss", "items": ["cappun"],
                                            "agents": bank["agents"]})  # fmt: skip
        assert refused.value.status == 403

    with pytest.raises(BankClientError) as wrong:
        BankClient(server.url, bank["team"][0], "not-the-secret")
    assert wrong.value.status == 401

    request = {"kind": "survey", "instrument": "gss", "items": ["cappun", "gunlaw"], "agents": bank["agents"]}
    with BankClient(server.url, *bank["team"]) as team:
        estimate = team.estimate(bank["project"], request)
        assert estimate["calls"] == 4 and estimate["price"] == 0.0  # the fake model costs nothing
        job = team.submit(bank["project"], request, idempotency_key="study-1")
        assert job["status"] == "queued" and job["total"] == 2
        worker = subprocess.run([sys.executable, "-c", "from app.cli import main; main()", "worker", "--burst"],
                                env=server.environment(), capture_output=True, text=True, timeout=300)  # fmt: skip
        assert worker.returncode == 0, worker.stdout + worker.stderr
        ended = team.wait(job["id"], poll_s=0.2, timeout_s=60, progress=False)
        assert ended["status"] == "done" and ended["done"] == 2
        assert team.submit(bank["project"], request, idempotency_key="study-1")["id"] == job["id"]  # once
        answers = team.results(job["id"])
        assert len(answers) == 4 and set(answers["key"]) == {"cappun", "gunlaw"}
        assert set(answers["agent_id"]) == set(bank["agents"]) and set(answers["status"]) == {"released"}
        assert answers["value"].notna().all() and (answers["model"] == "fake").all()
        uuid.UUID(answers["agent_id"].iloc[0])
        gss = load_gss()
        assert isinstance(answers["label"].dtype, pd.CategoricalDtype)
        assert [str(label) for label in answers["label"]] == [
            gss.item(key).label(value) for key, value in zip(answers["key"], answers["value"], strict=True)
        ]

        wide = team.results_table(job["id"])  # one row per agent, each item a categorical of its labels
        assert list(wide.columns) == ["agent_id", "status", "cappun", "gunlaw"]
        assert list(wide["cappun"].cat.categories) == [o.label for o in gss.item("cappun").options]
        assert list(wide["gunlaw"].cat.categories) == [o.label for o in gss.item("gunlaw").options]
        cappun = answers[answers["key"] == "cappun"].set_index("agent_id")["label"]
        assert {a: str(v) for a, v in zip(wide["agent_id"], wide["cappun"], strict=True)} == {
            a: str(v) for a, v in cappun.items()
        }
        assert "death penalty" in wide.attrs["variable_labels"]["cappun"].lower()
        assert wide.attrs["value_labels"]["cappun"] == {1: "favor", 2: "oppose"}


def test_the_client_runs_a_focus_group_and_reads_its_transcript(serve, fresh_database, tmp_path):
    bank = seed_bank(fresh_database, tmp_path / "server-data")
    server = serve()
    request = {
        "kind": "focus_group", "seats": bank["agents"],
        "stimulus": {"kind": "concept", "text": "The town library opens on Sundays."},
        "guide": {"topics": [{"title": "Sundays", "questions": ["What is your first reaction?"]}],
                  "max_turns": 2, "probes_per_question": 0},
    }  # fmt: skip
    with BankClient(server.url, *bank["team"]) as team:
        price = team.estimate_group(bank["project"], request)
        assert price["calls"] == 4 and [r["agent_turns"] for r in price["rounds"]] == [2]
        group = team.start_group(bank["project"], request, idempotency_key="sundays-1")
        assert group["status"] == "queued" and [s["seat"] for s in group["seats"]] == ["Seat 1", "Seat 2"]
        assert team.start_group(bank["project"], request, idempotency_key="sundays-1")["id"] == group["id"]  # once
        worker = subprocess.run([sys.executable, "-c", "from app.cli import main; main()", "worker", "--burst"],
                                env=server.environment(), capture_output=True, text=True, timeout=300)  # fmt: skip
        assert worker.returncode == 0, worker.stdout + worker.stderr
        assert team.wait_group(group["id"], poll_s=0.2, timeout_s=60)["status"] == "done"
        turns = team.group_transcript(group["id"])
        assert list(turns.columns) == ["number", "kind", "speaker", "text", "stance", "status"]
        assert list(turns["number"]) == list(range(len(turns)))
        said = turns[turns["kind"] == "agent"]
        assert list(said["speaker"]) == ["Seat 1", "Seat 2"] and said["text"].str.len().gt(0).all()
        assert team.group_result(group["id"])["framing"]["simulated"] is True
    with BankClient(server.url, *bank["reader"]) as reader, pytest.raises(BankClientError) as refused:
        reader.group(group["id"])
    assert refused.value.status == 403
