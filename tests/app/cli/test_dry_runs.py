"""``--dry-run`` on the commands that ask many agents: the estimate printed, nothing asked, queued or written."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, func, select, text
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from agentbank.db.models import AnswerRecord, AuditEvent
from app.cli import cli
from tests.support.factories import SECRET, build, process_keyring


def _bank_of_four(fresh_database, monkeypatch) -> None:
    monkeypatch.setenv("AGENTBANK_DATABASE_URL", fresh_database)
    monkeypatch.setenv("AGENTBANK_SECRET_KEY", SECRET)
    engine = create_engine(fresh_database)
    with Session(engine) as session, session.begin():
        keys = process_keyring(fresh_database)
        for n in range(4):
            build(session, ref=f"file:dry-{n}.json", keys=keys)
    engine.dispose()


def _nothing_answered(fresh_database) -> None:
    engine = create_engine(fresh_database)
    with Session(engine) as session:
        assert session.scalar(select(func.count()).select_from(AnswerRecord)) == 0
        actions = session.scalars(select(AuditEvent.action)).all()
        assert not any(a.endswith(".answer") or a == "population.queue" for a in actions)
        assert session.scalar(text("SELECT count(*) FROM procrastinate_jobs")) == 0
    engine.dispose()


def test_population_queue_dry_run(fresh_database, monkeypatch):
    _bank_of_four(fresh_database, monkeypatch)
    result = CliRunner().invoke(
        cli, ["population", "queue", "--items", "cappun,gunlaw", "--dry-run"], terminal_width=200
    )
    assert result.exit_code == 0, result.output
    assert "dry run" in result.output and "8 (0)" in result.output  # 4 agents × 2 items, none stored
    _nothing_answered(fresh_database)


def test_experiment_run_dry_run(fresh_database, monkeypatch, tmp_path):
    _bank_of_four(fresh_database, monkeypatch)
    args = ["experiment", "run", "halevy_halali", "--condition", "demographic", "--blinding", "blinded",
            "--no-reasons", "--dry-run"]  # fmt: skip
    result = CliRunner().invoke(cli, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "estimate for halevy_halali" in result.output and "earlier steps" in result.output
    assert not (Path(tmp_path) / "data" / "experiments").exists()  # no run begun
    _nothing_answered(fresh_database)


def test_evaluate_dry_run_estimates_the_banks_own_agents_only(fresh_database, monkeypatch, capsys):
    from app.cli import main

    monkeypatch.setenv("AGENTBANK_DATABASE_URL", fresh_database)
    monkeypatch.setenv("AGENTBANK_SECRET_KEY", SECRET)
    monkeypatch.setattr("sys.argv", ["agentbank", "evaluate", "--dataset", "gss-panel06", "--dry-run"])
    try:
        main()
    except SystemExit as exc:
        assert exc.code == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "bank's own agents (--dataset bank) only" in err and "Traceback" not in err
