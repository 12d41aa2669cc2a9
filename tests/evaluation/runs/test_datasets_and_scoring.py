"""Two-wave files, the non-LLM baselines, run planning and per-person scoring, on small known cases."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from agentbank.instruments.gss import load_gss
from evaluation.people.waves import MISSING, DatasetError, load_dataset
from evaluation.runs.baselines import MIN_CELL_ANSWERS, ModeBaseline
from evaluation.runs.plan import PlanError, plan_run
from evaluation.runs.records import ResultRow, RunConfig, RunError
from evaluation.scoring.scores import person_scores, summarize


def _csv(path: Path, lines: list[str]) -> Path:
    path.write_text("person,item,wave,answer\n" + "\n".join(lines) + "\n")
    return path


def test_csv_labels_codes_and_missing(tmp_path):
    path = _csv(
        tmp_path / "d.csv",
        ["a,cappun,1,Favor", "a,cappun,2,2", "a,polviews,1,Slghtly Conservative", "a,polviews,2,", "a,sex,1,2",
         "a,age,1,44", "b,cappun,1,Oppose", "b,cappun,2,Oppose"],
    )  # fmt: skip
    data = load_dataset(str(path), load_gss())
    assert data.answers(1) == {"a": {"cappun": 1, "polviews": 5, "sex": 2}, "b": {"cappun": 2}}
    assert data.answers(2) == {"a": {"cappun": 2}, "b": {"cappun": 2}}
    assert [r.status for r in data.responses if r.person == "a" and r.wave == 2 and r.item == "polviews"] == [MISSING]
    assert data.demographics["a"] == {"sex": 2, "age": 44, "polviews": 5}
    assert len(data.digest) == 64

    parquet = tmp_path / "d.parquet"
    pq.write_table(pa.table({"person": ["a"], "item": ["cappun"], "wave": [1], "answer": ["1"]}), parquet)
    assert load_dataset(str(parquet), load_gss()).answers(1) == {"a": {"cappun": 1}}


def test_rows_outside_the_codebook_are_set_aside_and_reported_together(tmp_path):
    lines = ["a,nosuchitem,1,1", "a,cappun,one,1", "a,cappun,1,9", "b,cappun,1,9", "b,cappun,1,Favor", "a,gunlaw,1,1"]
    data = load_dataset(str(_csv(tmp_path / "bad.csv", lines)), load_gss())
    assert data.answers(1) == {"b": {"cappun": 1}, "a": {"gunlaw": 1}}
    assert dict(data.report.set_aside["cappun"]) == {"9": 2}
    assert data.report.not_items == {"nosuchitem": 1}
    lines = "\n".join(data.report.lines())
    assert "set aside, not in the codebook of cappun: '9' ×2" in lines
    assert "rows without a readable wave, left out: 1" in lines
    with pytest.raises(DatasetError, match="no answer in the codebook's codes"):
        load_dataset(str(_csv(tmp_path / "none.csv", ["a,cappun,1,9"])), load_gss())


def test_unknown_dataset_and_format(tmp_path):
    with pytest.raises(DatasetError, match="no dataset named"):
        load_dataset("gss-panel99", load_gss())
    (tmp_path / "d.xlsx").write_bytes(b"x")
    with pytest.raises(DatasetError, match="unknown format"):
        load_dataset(str(tmp_path / "d.xlsx"), load_gss())


def test_mode_baselines_fall_back_to_the_population_when_a_cell_is_thin():
    women, men = {"sex": 2, "race": 1, "degree": 1, "age": 40}, {"sex": 1, "race": 1, "degree": 1, "age": 40}
    answers, demographics = {}, {}
    for n in range(MIN_CELL_ANSWERS):  # ten women who oppose
        answers[f"w{n}"], demographics[f"w{n}"] = {"cappun": 2}, women
    for n in range(MIN_CELL_ANSWERS + 5):  # fifteen men who favor
        answers[f"m{n}"], demographics[f"m{n}"] = {"cappun": 1}, men
    answers["x"], demographics["x"] = {"cappun": 2}, {"sex": 1, "race": 2, "degree": 4, "age": 70}
    baseline = ModeBaseline(answers, demographics)
    assert baseline.population_mode("cappun") == 1
    assert baseline.cell_mode("cappun", women) == 2
    assert baseline.cell_mode("cappun", {"sex": 1, "race": 2, "degree": 4, "age": 70}) == 1  # one answer: too thin
    tie = ModeBaseline({"a": {"trust": 3}, "b": {"trust": 1}}, {})
    assert tie.population_mode("trust") == 1  # ties go to the smaller code, the same on every run


def test_plan_chooses_well_covered_items_and_a_reproducible_sample():
    gss = load_gss()
    data = load_dataset("gss-panel06", gss, items=["cappun", "grass", "natenvir", "polviews", "chldidel"])
    plan = plan_run(data, gss, n_items=3, sample=50, seed=7)
    assert "chldidel" not in plan.items  # its labels do not all map
    assert "cappun" in plan.items and len(plan.items) == 3
    assert plan == plan_run(data, gss, n_items=3, sample=50, seed=7)
    assert plan.people != plan_run(data, gss, n_items=3, sample=50, seed=8).people
    assert not set(plan.people) & set(plan.training)
    with pytest.raises(PlanError, match="lower --sample"):
        plan_run(data, gss, n_items=3, sample=5000, seed=0)


def test_config_refuses_unknown_conditions():
    with pytest.raises(RunError, match="unknown condition"):
        RunConfig(dataset="gss-panel06", conditions=("survey", "oracle"))
    name = RunConfig("gss-panel06").run_id
    assert name("d1", "m", "p") == RunConfig("gss-panel06").run_id("d1", "m", "p")
    assert name("d1", "m", "p") != RunConfig("gss-panel06", seed=1).run_id("d1", "m", "p")
    # The data's content, the model and the prompt version name a run; where the file lies does not.
    assert len({name("d1", "m", "p"), name("d2", "m", "p"), name("d1", "m2", "p"), name("d1", "m", "p2")}) == 4
    moved = RunConfig("/elsewhere/gss-panel06").run_id("d1", "m", "p")
    assert moved == name("d1", "m", "p")


def test_person_scores_normalize_by_the_persons_own_retest():
    gss = load_gss()
    rows = [
        # Person a: agent right on 3 of 4, the person repeated 2 of 4 → normalized 1.5.
        ResultRow("a", "cappun", "survey", 1, 1, 1),
        ResultRow("a", "gunlaw", "survey", 1, 1, 2),
        ResultRow("a", "grass", "survey", 2, 2, 1),
        ResultRow("a", "natenvir", "survey", 1, 3, 3),
        # Person b never repeated an answer: no ceiling, so no normalized score.
        ResultRow("b", "cappun", "survey", 1, 1, 2),
        ResultRow("b", "gunlaw", "survey", 1, 2, 1),
        # An item the person skipped in wave 2 does not count on either side.
        ResultRow("b", "grass", "survey", 1, 1, None),
    ]
    scores = {s.person: s for s in person_scores(rows, gss)}
    assert scores["a"].accuracy == 0.75 and scores["a"].self_consistency == 0.5
    assert scores["a"].normalized == pytest.approx(1.5)
    assert scores["b"].items == 2 and scores["b"].normalized is None
    summary = summarize(list(scores.values()), rows, {"a": {"sex": 1}, "b": {"sex": 2}}, min_group=1)
    survey = summary["conditions"]["survey"]
    assert survey["people"] == 2 and survey["accuracy"] == pytest.approx((0.75 + 0.5) / 2)
    assert survey["normalized_accuracy"] == pytest.approx(1.5)
    assert summary["items"]["cappun"] == {"survey": 1.0, "retest": 0.5}
    assert summary["parity"]["survey"]["sex"]["means"] == {"male": 1.5}


def test_parity_compares_only_groups_of_the_minimum_size():
    rows, demographics = [], {}
    for n in range(9):  # six men, three women; everyone repeated their answer, the agent got it right
        person = f"p{n}"
        demographics[person] = {"sex": 1 if n < 6 else 2}
        rows.append(ResultRow(person, "cappun", "survey", 1, 1, 1))
        rows.append(ResultRow(person, "gunlaw", "survey", 1 if n < 6 else 2, 1, 1))
    scores = person_scores(rows, load_gss())
    small = summarize(scores, rows, demographics, min_group=4)["parity"]["survey"]["sex"]
    assert small == {"means": {"male": 1.0}, "counts": {"female": 3, "male": 6}, "dpd": None}
    both = summarize(scores, rows, demographics, min_group=3)["parity"]["survey"]["sex"]
    assert both["dpd"] == pytest.approx(0.5) and both["counts"] == {"female": 3, "male": 6}
