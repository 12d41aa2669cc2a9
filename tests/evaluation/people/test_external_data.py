"""Researchers' own GSS files: the panels' layout in CSV or Parquet, wide files, codes outside the
codebook and every demographic, loaded with one report of what was set aside."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from agentbank.instruments.gss import load_gss
from agentbank.publication.breakdowns import BREAKDOWNS
from evaluation.people.panel_files import panel_path
from evaluation.people.waves import load_dataset
from evaluation.runs.plan import plan_run

PANEL06 = panel_path("gss-panel06")  # the shipped panel, checked against its manifest
GSS = load_gss()


def _extract(path: Path, people: int = 40) -> Path:
    """A wide GSS extract as a researcher would download it: numeric codes, some outside the Core
    codebook, the nine census divisions, EDUC instead of DEGREE, top-coded ages, Hispanic origins."""
    rows: dict[str, list] = {k: [] for k in (
        "id", "year", "wtssall", "sex", "race", "region", "educ", "hispanic", "age_1", "age_2", "marital",
        "cappun_1", "cappun_2", "natenvir_1", "natenvir_2", "chldidel_1", "chldidel_2", "polviews_1", "polviews_2",
        "partyid_1", "partyid_2", "vpsu", "favcolor_1")}  # fmt: skip
    for n in range(people):
        rows["id"].append(1000 + n)
        rows["year"].append(2006)
        rows["wtssall"].append(1.1)
        rows["sex"].append(1 + n % 2)
        rows["race"].append(1 + n % 3)
        rows["region"].append(1 + n % 9)  # census divisions 1–9
        rows["educ"].append((8, 12, 14, 16, 18)[n % 5])
        rows["hispanic"].append((1, 2, 3, "Not Hispanic", "Puerto Rican")[n % 5])
        rows["age_1"].append("89 or older" if n == 0 else str(20 + n))
        rows["age_2"].append("89 or older" if n in (0, 39) else str(22 + n))
        rows["marital"].append(1 + n % 5)
        rows["cappun_1"].append(1 + n % 2)
        rows["cappun_2"].append(1 + (n // 2) % 2)
        rows["natenvir_1"].append(8 if n % 10 == 0 else 1 + n % 3)  # 8: a "don't know" code not in the codebook
        rows["natenvir_2"].append(1 + n % 3)
        rows["chldidel_1"].append(2 + n % 3)  # the Core codebook lists only 7 and 8
        rows["chldidel_2"].append(2)
        rows["polviews_1"].append(1 + n % 7)
        rows["polviews_2"].append("Slghtly Conservative")
        rows["partyid_1"].append(n % 7)
        rows["partyid_2"].append(9 if n == 5 else n % 7)  # 9: no answer, outside the codebook
        rows["vpsu"].append(1)
        rows["favcolor_1"].append("blue")
    table = pa.table({k: pa.array([str(v) for v in values]) if k in ("hispanic", "age_1", "age_2", "polviews_2")
                      else pa.array(values) for k, values in rows.items()})  # fmt: skip
    pq.write_table(table, path)
    return path


def test_a_real_shaped_extract_loads_with_one_report(tmp_path):
    data = load_dataset(str(_extract(tmp_path / "gss_extract.parquet")), GSS)
    report = data.report
    assert report.layout == "wide" and report.people == 40
    # Codes outside the codebook: all of them, per item, with counts, kept out of scoring.
    assert dict(report.set_aside["natenvir"]) == {"8": 4}
    assert dict(report.set_aside["chldidel"]) == {"2": 54, "3": 13, "4": 13}
    assert dict(report.set_aside["partyid"]) == {"9": 1}
    assert "natenvir" not in data.answers(1)["1000"] and data.answers(1)["1001"]["natenvir"] == 2
    assert report.not_items == {"favcolor": 1}  # id, year, weights and design columns are not reported
    # Documented recodes, counted.
    assert report.recodes["region: census division (1–9) → census region (1–4)"] == 40
    assert report.recodes["degree: from years of school (educ <12, 12, 14, 16, 18+ → 0–4)"] == 40
    assert report.recodes["age: '89 or older' read as 89 (the GSS top-codes age at 89)"] == 3  # in either wave
    assert report.recodes["hispanic: an origin code (2–50) read as Hispanic"] == 16
    assert report.recodes["hispanic: an origin label read as Hispanic"] == 8
    # Every demographic the prompts and cells use is set, none silently unknown.
    first, second = data.demographics["1000"], data.demographics["1001"]
    assert first == {"sex": 1, "race": 1, "region": 1, "educ": 8, "degree": 0, "hispanic": 1, "age": 89,
                     "marital": 1, "polviews": 1, "partyid": 0}  # fmt: skip
    assert second["region"] == 1 and second["hispanic"] == 2 and second["degree"] == 1
    assert {d["region"] for d in data.demographics.values()} == {1, 2, 3, 4}
    for key in ("sex", "race", "education", "age_band", "region"):
        assert all(BREAKDOWNS[key].classify(d) != "unknown" for d in data.demographics.values()), key
    assert data.answers(2)["1000"]["polviews"] == 5
    lines = report.lines()
    assert lines[0] == "wide layout: 40 people, 515 answers in the codebook's codes"
    assert sum(line.startswith("set aside") for line in lines) == 3 and not report.notes
    # Items mostly set aside are not chosen for a run; the rest are.
    plan = plan_run(data, GSS, n_items=5, sample=10, seed=0)
    assert "chldidel" not in plan.items and {"cappun", "natenvir", "polviews", "partyid"} <= set(plan.items)


def test_a_file_without_education_says_so(tmp_path):
    path = tmp_path / "no_degree.csv"
    path.write_text("person,item,wave,answer\na,cappun,1,1\na,cappun,2,1\na,sex,1,2\n")
    notes = load_dataset(str(path), GSS).report.notes
    assert "no degree for anyone: the education cell is unknown for everyone" in notes
    assert "no age for anyone: demographic agents omit it and its cell is unknown for everyone" in notes


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_the_panels_own_layout_loads_from_csv_or_parquet(tmp_path, suffix):
    columns = ["firstid", "wave", "sex", "age", "degree", "region", "hispanic", "cappun", "polviews", "chldidel"]
    table = pq.read_table(PANEL06, columns=columns).slice(0, 600)
    path = tmp_path / f"panel{suffix}"
    (pacsv.write_csv if suffix == ".csv" else pq.write_table)(table, path)
    started = time.perf_counter()
    data = load_dataset(str(path), GSS)
    assert time.perf_counter() - started < 5
    assert data.report.layout == "long" and set(data.items()) >= {"cappun", "polviews", "sex"}
    reference = load_dataset("gss-panel06", GSS, ["cappun", "polviews"])
    mine = data.answers(1)
    assert mine and all(reference.answers(1).get(p, {}).get("cappun") == a.get("cappun") for p, a in mine.items())
    assert set(data.report.set_aside) == {"chldidel"}


def test_a_million_rows_load_in_seconds(tmp_path):
    people, items = 50_000, ["cappun", "gunlaw", "grass", "natenvir", "natheal", "polviews", "trust", "fair", "helpful",
                             "happy"]  # fmt: skip
    n = people * len(items) * 2
    table = pa.table({
        "person": pa.array([f"p{i // (len(items) * 2)}" for i in range(n)]),
        "item": pa.array([items[(i // 2) % len(items)] for i in range(n)]),
        "wave": pa.array([1 + i % 2 for i in range(n)]),
        "answer": pa.array(["1" if i % 3 else "2" for i in range(n)]),
    })  # fmt: skip
    path = tmp_path / "million.parquet"
    pq.write_table(table, path)
    started = time.perf_counter()
    data = load_dataset(str(path), GSS)
    seconds = time.perf_counter() - started
    assert data.report.answers == n == 1_000_000
    assert seconds < 30, f"{seconds:.1f} s"
