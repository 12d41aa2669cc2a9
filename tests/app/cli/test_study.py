"""``agentbank study``: a cohort invited from the command line, written as CSV, followed and revoked."""

import csv

from typer.testing import CliRunner

from app.cli import cli
from tests.support.command_line import agentbank


def run(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_a_study_invited_followed_exported_and_revoked(tmp_path):
    assert agentbank("db", "upgrade").returncode == 0
    assert "target 5" in run("study", "create", "Pilot", "--target", "5", "--panel", "prolific",
                             "--completion-url", "https://app.prolific.com/submissions/complete?cc=C0DE")  # fmt: skip
    codes = tmp_path / "codes.csv"
    run("study", "invite", "Pilot", "-n", "5", "--out", str(codes))
    rows = list(csv.DictReader(codes.open()))
    assert len(rows) == 5 and len({r["code"] for r in rows}) == 5
    assert all(r["link"] == f"http://127.0.0.1:8000/interview#invite={r['code']}" for r in rows)
    # The codes are written once: a second run never overwrites the file that holds them.
    again = CliRunner().invoke(cli, ["study", "invite", "Pilot", "-n", "1", "--out", str(codes)])
    assert again.exit_code != 0 and len(list(csv.DictReader(codes.open()))) == 5

    assert "id_param=PROLIFIC_PID" in run("study", "link", "Pilot")
    status = run("study", "status", "Pilot")
    assert "5 invited" in status and "invited" in status
    assert "2 unused invitations revoked" in run(
        "study", "revoke", "Pilot", "--invitation", rows[0]["invitation"], "--invitation", rows[1]["invitation"]
    )
    assert "3 invited" in run("study", "status", "Pilot")
    exported = tmp_path / "progress.csv"
    run("study", "export", "Pilot", "--out", str(exported))
    stages = [r["stage"] for r in csv.DictReader(exported.open())]
    assert sorted(stages) == ["invited"] * 3 + ["revoked"] * 2
    assert "0 due for the retest" in run("study", "reminders", "Pilot")
    unset = CliRunner().invoke(cli, ["study", "reminders", "Pilot", "--send"])
    assert unset.exit_code != 0 and "SMTP" in str(unset.exception or unset.output)
