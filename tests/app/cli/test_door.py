"""The command line answers through the one door: every operator use is audited with its purpose and
shows in the participant's portal."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from agentbank.audit.log import SYSTEM
from agentbank.db.models import Agent, AuditEvent
from agentbank.participants.portal import uses_of_agent
from app.cli import cli
from app.cli.agents import DEMO_PURPOSE
from tests.support.factories import SECRET, build, process_keyring


def operator_events(url: str) -> list[AuditEvent]:
    engine = create_engine(url)
    with Session(engine) as session:
        found = list(session.scalars(select(AuditEvent).where(AuditEvent.action == "operator.answer")))
    engine.dispose()
    return found


def test_ask_survey_and_demo_are_audited_with_their_purpose(fresh_database, monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTBANK_DATABASE_URL", fresh_database)
    monkeypatch.setenv("AGENTBANK_SECRET_KEY", SECRET)
    engine = create_engine(fresh_database)
    with Session(engine) as session, session.begin():
        participant, agent, *_ = build(session, keys=process_keyring(fresh_database))
        pseudonym, participant_id, agent_id = participant.pseudonym, participant.id, agent.id
    runner = CliRunner()

    asked = runner.invoke(cli, ["ask", pseudonym, "Where did you grow up?", "--purpose", "checking a complaint"])
    assert asked.exit_code == 0, asked.output
    surveyed = runner.invoke(cli, ["survey", "--items", "cappun", "--csv", str(tmp_path / "s.csv")])
    assert surveyed.exit_code == 0, surveyed.output
    (ask_event, survey_event) = operator_events(fresh_database)
    assert ask_event.agent_id == survey_event.agent_id == agent_id
    assert ask_event.details["purpose"] == "checking a complaint" and ask_event.details["kind"] == "open"
    assert survey_event.details["purpose"] == "surveying agents from the command line"
    assert survey_event.details["items"] == ["cappun"]

    with Session(engine) as session:
        uses = [u for u in uses_of_agent(session, participant_id, SYSTEM) if u.action == "operator.answer"]
    assert [u.purpose for u in uses] == ["checking a complaint", "surveying agents from the command line"]
    assert all(u.outcome == "operator" and u.tier == "operator" for u in uses)

    demo = runner.invoke(cli, ["demo"])  # the fictional people; nothing from beside the checkout
    assert demo.exit_code == 0, demo.output
    with Session(engine) as session:
        built = set(session.scalars(select(Agent.id).where(Agent.id != agent_id)))
    answered = Counter(e.agent_id for e in operator_events(fresh_database) if e.details["purpose"] == DEMO_PURPOSE)
    # Each agent the demo builds (the earlier participant's is rebuilt with the demo's models) answers
    # twice: as soon as it is built, then in the closing table.
    assert built and answered == dict.fromkeys(built, 2)
    engine.dispose()
