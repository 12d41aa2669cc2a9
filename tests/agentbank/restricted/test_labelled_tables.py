"""A job's results as a labelled table, and the labelled formats' limits, without a database: column names
every format takes, withheld and missing answers missing, text kept whole, long labels cut, never refused."""

import uuid

import pandas as pd
import pyreadstat
import pytest

from agentbank.core.statuses import TaskStatus
from agentbank.instruments import load_gss
from agentbank.instruments.exports import FileFormat, LabelledTable, encode, variable_name, variable_names
from agentbank.restricted.jobs.requests import parse_request
from agentbank.restricted.jobs.tables import AgentResult, answer_items, label_answers, results_table

AGENTS = [str(uuid.uuid4()) for _ in range(3)]


def read(tmp_path, table: LabelledTable, fmt: str):
    path = tmp_path / f"t.{fmt}"
    path.write_bytes(encode(table, FileFormat(fmt))[0])
    return {"dta": pyreadstat.read_dta, "sav": pyreadstat.read_sav}[fmt](str(path))


def test_column_names_every_format_takes_and_never_twice():
    assert variable_name("question 1") == "question_1" and variable_name("low_power:trust") == "low_power_trust"
    assert variable_name("2nd") == "v2nd" and variable_name("::") == "v" and len(variable_name("a" * 50)) == 32
    names = variable_names(["a" * 40 + ":x", "a" * 40 + ":y", "agent_id"], taken=("agent_id",))
    assert len(set(names.values())) == 3 and "agent_id" not in names.values()
    assert all(len(n) <= 32 for n in names.values())


@pytest.mark.parametrize("fmt", ["dta", "sav"])
def test_a_survey_job_withheld_and_unavailable_answers_are_missing_with_every_label(tmp_path, fmt):
    request = parse_request({"kind": "survey", "instrument": "gss", "items": ["CAPPUN", "gunlaw"], "agents": AGENTS})
    items = answer_items(request, tmp_path)
    entries = [
        AgentResult(uuid.UUID(AGENTS[0]), TaskStatus.RELEASED, [{"key": "cappun", "value": 2},
                                                                {"key": "gunlaw", "value": 1}]),
        AgentResult(uuid.UUID(AGENTS[1]), TaskStatus.WITHHELD, [{"key": "cappun", "value": 1},
                                                                {"key": "gunlaw", "withheld": True,
                                                                 "reason": "under review"}]),
        AgentResult(uuid.UUID(AGENTS[2]), TaskStatus.UNAVAILABLE),
    ]  # fmt: skip
    labelled = label_answers(entries, items)
    assert [a.get("label") for a in labelled[1].answers] == ["favor", None]
    frame, meta = read(tmp_path, results_table(request, entries, items, "job"), fmt)
    assert list(frame.columns) == ["agent_id", "status", "cappun", "gunlaw"]
    assert frame["cappun"].tolist()[:2] == [2, 1] and frame["cappun"].isna().tolist() == [False, False, True]
    assert frame["gunlaw"].isna().tolist() == [False, True, True]  # withheld: missing, not its placeholder
    gss = load_gss()
    assert meta.variable_value_labels["gunlaw"] == {o.code: o.label for o in gss.item("gunlaw").options}
    assert "agent" in meta.column_names_to_labels["agent_id"]


def test_open_answers_are_text_kept_whole_under_their_question(tmp_path):
    questions = ["What did your first job teach you?", "Où avez-vous grandi ?"]
    request = parse_request({"kind": "open", "questions": questions, "agents": AGENTS[:1]})
    long = ("I learned to listen. " * 300).strip()  # past Stata's 2,045 bytes of a short string
    answers = [{"key": "question 1", "value": long}, {"key": "question 2", "value": "À Lyon."}]
    entries = [AgentResult(uuid.UUID(AGENTS[0]), TaskStatus.RELEASED, answers)]
    table = results_table(request, entries, answer_items(request, tmp_path), "job")
    for fmt in ("dta", "sav"):
        frame, meta = read(tmp_path, table, fmt)
        assert frame["question_1"][0] == long and frame["question_2"][0] == "À Lyon."
        assert meta.column_names_to_labels["question_2"] == questions[1] and not meta.variable_value_labels


def test_long_labels_are_cut_to_each_format_never_refused(tmp_path):
    frame = pd.DataFrame({"code": pd.array([1, None], dtype="Int64"), "note": ["é", None]})
    table = LabelledTable(frame, {"code": "é" * 300}, {"code": {1: "x" * 500}}, "release " + "9" * 100)
    for fmt, limit in (("dta", 80), ("sav", 255)):
        back, meta = read(tmp_path, table, fmt)
        label = meta.column_names_to_labels["code"]
        assert label.endswith("…") and len(label.encode()) <= limit and label.startswith("é")
        assert back["code"].isna().tolist() == [False, True] and back["note"].tolist() == ["é", ""]
