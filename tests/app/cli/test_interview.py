"""``agentbank interview``: invitations, and a typed interview in the terminal with a scripted interviewee."""

from typer.testing import CliRunner

from app.cli import cli
from tests.support.command_line import agentbank


def test_invite_and_a_short_text_interview(monkeypatch):
    assert agentbank("db", "upgrade").returncode == 0
    invited = agentbank("interview", "invite")
    assert invited.returncode == 0 and "http://127.0.0.1:8000/interview#invite=" in invited.stdout
    # The fake model's follow-up ("x") is no question, so it is never asked: each of the 16 questions takes one
    # answer, and its module (one question each in the short version) is told back and answered once.
    first = CliRunner().invoke(cli, ["interview", "--text", "--short"], input="y\n" + "Answer.\n" * 16)
    assert first.exit_code == 0, first.output
    assert "AI" in first.output and "paused. Continue with" in first.output
    code = first.output.split("--resume")[-1].split()[0]
    rest = CliRunner().invoke(cli, ["interview", "--text", "--resume", code], input="Answer.\n" * 16 + "\ny\n")
    assert rest.exit_code == 0, rest.output
    assert "question 9 of 16" in rest.output and "access code" in rest.output


def test_invite_links_to_the_port_the_server_runs_on():
    from agentbank.core.settings import Settings
    from app.cli import server_url

    assert agentbank("db", "upgrade").returncode == 0
    served = server_url.remember(Settings(), "0.0.0.0", 8765)
    invited = agentbank("interview", "invite")
    assert invited.returncode == 0 and "http://127.0.0.1:8765/interview#invite=" in invited.stdout
    public = agentbank("interview", "invite", "--url", "https://interviews.example.org/")
    assert "https://interviews.example.org/interview#invite=" in public.stdout
    server_url.forget(Settings(), served)
    assert "http://127.0.0.1:8000/interview#invite=" in agentbank("interview", "invite").stdout
