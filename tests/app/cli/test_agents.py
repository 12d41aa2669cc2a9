"""The agent commands end to end, as a person runs them (embedded database, fake models)."""

import csv
import json
import shutil

from tests.support.command_line import SAMPLE, agentbank


def test_ingest_build_survey_ask(tmp_path):
    assert agentbank("db", "upgrade").returncode == 0
    source = tmp_path / "in"
    source.mkdir()
    shutil.copy(SAMPLE / "joon_park_sample_interview.json", source / "a_good.json")
    (source / "b_bad.json").write_text(json.dumps({"turns": [{"interviewer": "Hi", "respondent": 3}]}))

    failed = agentbank("ingest", str(source))
    assert failed.returncode == 1
    assert "b_bad.json: turns[0].respondent" in failed.stderr and "Traceback" not in failed.stderr
    # Nothing of the failed batch was written: the good file is new to the bank.
    first = agentbank("ingest", str(source / "a_good.json"))
    assert "stored 1 interview(s) (10,007 participant words)" in first.stdout
    assert "0 stored" not in agentbank("ingest", str(source / "a_good.json")).stdout
    assert "1 already present" in agentbank("ingest", str(source / "a_good.json")).stdout

    built = agentbank("build")
    assert built.returncode == 0 and "built 1 agent(s)" in built.stdout
    assert "every agent is up to date" in agentbank("build").stdout

    out = tmp_path / "answers.csv"
    surveyed = agentbank("survey", "--items", "CAPPUN,polviews", "--csv", str(out))
    assert surveyed.returncode == 0, surveyed.stderr
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 1 and set(rows[0]) == {"agent", "agent_id", "agent_version", "CAPPUN", "POLVIEWS"}
    assert rows[0]["CAPPUN"] in {"1", "2"} and rows[0]["POLVIEWS"] in {str(c) for c in range(1, 8)}

    asked = agentbank("ask", rows[0]["agent"], "Where did you grow up?")
    assert asked.returncode == 0 and "cites turns" in asked.stdout


def test_clear_errors_for_bad_requests(tmp_path):
    unknown = agentbank("survey", "--items", "NOSUCH")
    assert unknown.returncode == 1 and "gss has no item 'NOSUCH'" in unknown.stderr
    missing = agentbank("ingest", str(tmp_path / "absent.json"))
    assert missing.returncode == 1 and "no such file" in missing.stderr
    # A first command on a fresh data directory creates the embedded database's schema itself.
    no_agent = agentbank("ask", "P-00000000", "Hello?")
    assert no_agent.returncode == 1 and "no active agent" in no_agent.stderr
    for result in (unknown, missing, no_agent):
        assert "Traceback" not in result.stderr
