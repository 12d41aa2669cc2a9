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


def test_own_completion_codes_are_listed_and_a_panels_export_records_its_outcomes(tmp_path):
    assert agentbank("db", "upgrade").returncode == 0
    own = "https://app.prolific.com/submissions/complete?cc={code}"
    run("study", "create", "Coded", "--target", "5", "--panel", "prolific", "--completion-url", own,
        "--completion-codes", "per_participant")  # fmt: skip
    codes = tmp_path / "codes.csv"
    assert "0 completion codes written" in run("study", "codes", "Coded", "--out", str(codes))
    assert codes.read_text() == "ending,code\n"  # nobody has reached an end yet
    export = tmp_path / "prolific.csv"
    export.write_text("Submission id,Participant id,Status\ns1,5f00a1,RETURNED\ns2,5f00a2,TIMED-OUT\n"
                      "s3,5f00a3,APPROVED\n", encoding="utf-8")  # fmt: skip
    recorded = run("study", "outcomes", "Coded", str(export))
    assert "0 outcomes recorded" in recorded and "2 panel ids not in the study; 1 other lines" in recorded
    export.write_text("id,state\n5f00a1,RETURNED\n", encoding="utf-8")
    missing = CliRunner().invoke(cli, ["study", "outcomes", "Coded", str(export)])
    assert missing.exit_code != 0 and "Participant id" in str(missing.exception or missing.output)
    assert "0 outcomes recorded" in run("study", "outcomes", "Coded", str(export), "--id-column", "id",
                                        "--status-column", "state")  # fmt: skip
    nowhere = CliRunner().invoke(cli, ["study", "create", "Nowhere", "--target", "5", "--completion-codes",
                                       "per_participant"])  # fmt: skip
    assert nowhere.exit_code != 0
