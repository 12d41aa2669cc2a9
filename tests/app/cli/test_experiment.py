"""``agentbank experiment`` from a fresh data directory: list, refusals in plain words, a run and its report."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import create_engine
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from app.cli import cli, main
from tests.support.factories import SECRET, build, process_keyring


def test_list_shows_the_five_with_the_peoples_effects():
    listed = CliRunner().invoke(cli, ["experiment", "list"], terminal_width=200)
    assert listed.exit_code == 0, listed.output
    for name in ("ames_fiske", "cooney", "halevy_halali", "rai", "schilke"):
        assert name in listed.output
    assert "(n.s.)" in listed.output  # Rai et al.: no effect in people


def test_refusals_are_one_readable_line(fresh_database, monkeypatch, capsys):
    monkeypatch.setenv("AGENTBANK_DATABASE_URL", fresh_database)
    monkeypatch.setenv("AGENTBANK_SECRET_KEY", SECRET)
    for args, said in (
        (["experiment", "run", "milgram"], "no experiment called 'milgram'"),
        (["experiment", "run", "cooney"], "at least two active agents"),
        (["experiment", "run", "cooney", "--condition", "survey"], "unknown condition survey"),
    ):
        monkeypatch.setattr("sys.argv", ["agentbank", *args])
        try:
            main()
        except SystemExit as exc:
            assert exc.code == 1
        err = capsys.readouterr().err
        assert said in " ".join(err.split()) and "Traceback" not in err


def test_a_run_writes_its_report_and_resumes(fresh_database, monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTBANK_DATABASE_URL", fresh_database)
    monkeypatch.setenv("AGENTBANK_SECRET_KEY", SECRET)
    engine = create_engine(fresh_database)
    with Session(engine) as session, session.begin():
        keys = process_keyring(fresh_database)
        for n in range(4):
            build(session, ref=f"file:cli-{n}.json", keys=keys)
    engine.dispose()
    runner = CliRunner()
    args = ["experiment", "run", "halevy_halali", "--condition", "demographic", "--blinding", "blinded", "--no-reasons"]
    first = runner.invoke(cli, args, terminal_width=200)
    assert first.exit_code == 0, first.output
    assert "halevy_halali" in first.output and "finished" in first.output
    (run,) = (Path(tmp_path) / "data" / "experiments").iterdir()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["experiments"][0]["results"][0]["agents"] == 4
    assert (run / "report.html").read_text().startswith("<!doctype html>")
    again = runner.invoke(cli, args, terminal_width=200)
    assert again.exit_code == 0 and "resumed" in again.output
    page = Path(tmp_path) / "compared.html"
    compared = runner.invoke(cli, ["experiment", "compare", str(run), str(run), "--out", str(page)])
    assert compared.exit_code == 0, compared.output
    assert page.read_text().count(run.name) == 2 and "halevy_halali d" in page.read_text()
