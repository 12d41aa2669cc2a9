"""The teams' console in a real browser: a team member signs in through a local OpenID Connect provider,
reads the withdrawal notice the bank left, submits a job from the form, follows it to the end and
downloads its results."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyreadstat
import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import sessionmaker

from agentbank.access import people
from agentbank.access.clients import create_client
from agentbank.access.principals import Principal
from agentbank.access.scope import ProjectScope
from agentbank.audit import log as audit
from agentbank.consultation.door import AgentDoor
from agentbank.db.models import AuditEvent, OutboxEvent
from agentbank.participants.withdrawal import withdraw
from agentbank.restricted import projects
from agentbank.restricted.jobs.lifecycle import run_job_task, submit_job
from agentbank.restricted.jobs.requests import SurveyRequest
from tests.app.web.consoles import console_server, open_page, sign_in
from tests.app.web.interview_browser import check_screen
from tests.support.factories import build, process_keyring

pytestmark = pytest.mark.slow  # a server process, a worker, an identity provider and a browser

OPERATOR = audit.Actor("operator", "test")
EMAIL = "grace.team@example.org"
PURPOSE = "How people describe their childhood homes, across regions and generations."


def seed(url: str, data_dir: Path) -> dict[str, str]:
    """A team's approved project over two agents; one agent's participant withdrew after it answered a job."""
    engine = create_engine(url)
    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    keys = process_keyring(url, data_dir)
    with sessions() as session, session.begin():
        staying, agent, chat, embedder, _ = build(session, ref="file:stays.json", keys=keys)
        leaving, gone, *_ = build(session, ref="file:leaves.json", keys=keys, chat=chat, embedder=embedder)
        team = create_client(session, "team", ["projects:apply", "individual:query"], OPERATOR).client
        people.link_person(session, team.client_id, EMAIL, OPERATOR)
        member = Principal("client", team.client_id, team.id, frozenset({"projects:apply", "individual:query"}))
        application = projects.Application("Childhood homes", PURPOSE, PURPOSE, [], None, ["survey", "open"])
        project = projects.apply(session, member, application)
        grant = ProjectScope.of(None, ["survey", "open"], 5, 100, datetime.now(UTC) + timedelta(days=30))
        projects.decide(session, Principal("client", "reviewer", None, frozenset({"review"})), project.id, grant, "ok")
        request = SurveyRequest(kind="survey", instrument="gss", items=["grass"], agents=[gone.id])
        job, _ = submit_job(session, member, project.id, "before-withdrawal", request, Path("."))
        ids = {"project": str(project.id), "agent": str(agent.id), "gone": str(gone.id), "job": job.id}
    run_job_task(
        sessions,
        AgentDoor(chat=chat, embedder=embedder, keys=keys, memory_token_budget=4000),
        ids["job"],
        gone.id,
        Path("."),
    )
    with sessions() as session, session.begin():
        withdraw(session, keys, leaving.id, audit.Actor("participant", leaving.pseudonym), ledger=None)
    engine.dispose()
    return ids


def test_a_team_reads_its_notice_runs_a_job_and_downloads_results(serve, chromium, fresh_database, tmp_path):
    from playwright.sync_api import expect

    found = seed(fresh_database, tmp_path / "server-data")
    with console_server(serve, EMAIL) as (server, sub):
        page, errors = open_page(chromium, f"{server.url}/projects")
        problems = check_screen(page, tmp_path, "projects-signin")
        sign_in(page, sub)
        expect(page.locator("#email")).to_have_text(EMAIL)

        card = page.locator(f"article[data-project='{found['project']}']")
        expect(card.locator(".notice")).to_contain_text("A participant withdrew")
        expect(card.locator(".notice")).to_contain_text(found["gone"])
        # Showing the notice changed nothing; the member marks it read (a POST with the session's CSRF token).
        card.locator(".notice").get_by_role("button", name="Mark as read").click()
        expect(card.locator(".notice")).to_contain_text("Marked read")
        expect(card.locator(".agents")).to_contain_text(found["agent"])
        expect(card.locator(".agents")).not_to_contain_text(found["gone"])  # a withdrawn agent is gone
        expect(card.locator(".agents")).to_contain_text("not validated yet")
        expect(card.locator(".jobs tbody tr")).to_have_count(1)  # the job from before the withdrawal
        problems += check_screen(page, tmp_path, "projects-console")

        # A survey job from the form, for the remaining agent.
        card.get_by_label("What to ask").select_option(label="Survey items")
        expect(card.get_by_label("Open questions")).to_be_hidden()  # only the chosen kind's field shows
        card.get_by_label("Survey items").fill("cappun, gunlaw")
        # Before submitting, what it would cost: a dry run that asks no model and queues nothing.
        card.get_by_role("button", name="Estimate the cost").click()
        estimate = card.locator(".estimate")
        expect(estimate).to_contain_text("Estimate: 2 model call(s) for 2 answer(s) (0 already stored)")
        expect(estimate).to_contain_text("price: free")
        expect(card.locator(".jobs tbody tr")).to_have_count(1)  # nothing submitted
        card.get_by_role("button", name="Submit the job").click()
        expect(page.locator("#message")).to_contain_text("Job submitted for 1 agent(s)")
        expect(card.locator(".jobs tbody tr")).to_have_count(2)
        expect(card.locator(".jobs tbody tr").first).to_contain_text("0 of 1 agents")

        worker = subprocess.run([sys.executable, "-c", "from app.cli import main; main()", "worker", "--burst"],
                                env=server.environment(), capture_output=True, text=True, timeout=300)  # fmt: skip
        assert worker.returncode == 0, worker.stdout + worker.stderr
        newest = card.locator(".jobs tbody tr").first
        expect(newest).to_contain_text("1 of 1 agents — done", timeout=15_000)
        expect(page.locator("#message")).to_contain_text("Job finished")
        expect(page.locator("#message")).to_contain_text("The model made 2 answer(s)")  # beside the estimate:
        expect(page.locator("#message")).to_contain_text("completion tokens; estimated")

        with page.expect_download() as downloading:
            newest.get_by_role("button", name="Download CSV").click()
        rows = Path(downloading.value.path()).read_text(encoding="utf-8").splitlines()
        assert rows[0] == "agent_id,status,key,value,label,reason,withheld,model,validity"
        assert {row.split(",")[2] for row in rows[1:]} == {"cappun", "gunlaw"}
        assert {row.split(",")[4] for row in rows[1:]} == {"favor"}  # each code with its label
        assert all(row.startswith(found["agent"] + ",released,") for row in rows[1:])
        with page.expect_download() as downloading:  # the bank's labelled file, for Stata
            newest.get_by_role("button", name="Download Stata").click()
        assert downloading.value.suggested_filename.endswith(".dta")
        table, meta = pyreadstat.read_dta(downloading.value.path())
        assert list(table["agent_id"]) == [found["agent"]] and meta.variable_value_labels["cappun"][1] == "favor"
        problems += check_screen(page, tmp_path, "projects-job-done")

    engine = create_engine(fresh_database)
    with sessionmaker(bind=engine)() as session:
        (notice,) = session.scalars(select(OutboxEvent)).all()
        assert notice.delivered_at is not None  # marked read by the team: delivered
        actions = set(session.scalars(select(AuditEvent.action)).all())
        assert {"session.open", "project.notices.read", "project.notice.delivered", "job.results.read"} <= actions
    engine.dispose()
    assert not problems, "\n".join(problems)
    assert not errors
