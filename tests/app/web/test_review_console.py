"""The reviewers' console in a real browser: a reviewer signs in through a local OpenID Connect provider,
approves a project's application with a scope, and releases an answer the output check withheld."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session, sessionmaker

from agentbank.access import people
from agentbank.access.clients import create_client
from agentbank.access.principals import Principal
from agentbank.access.scope import ProjectScope
from agentbank.audit import log as audit
from agentbank.consultation.door import AgentDoor
from agentbank.db.models import AuditEvent, Project, WithheldAnswer
from agentbank.providers.fakes import ScriptedChatModel
from agentbank.restricted import projects
from agentbank.restricted.instruments import Source, add_instrument
from agentbank.restricted.jobs.lifecycle import run_job_task, submit_job
from agentbank.restricted.jobs.requests import OpenRequest
from tests.app.api.protection import leaky
from tests.app.web.consoles import console_server, open_page, sign_in
from tests.app.web.interview_browser import check_screen
from tests.support.factories import build, process_keyring

pytestmark = pytest.mark.slow  # a server process, an identity provider and a browser

OPERATOR = audit.Actor("operator", "test")
REVIEWER_EMAIL = "ada.reviewer@example.org"
PURPOSE = "How people describe their childhood homes, across regions and generations."
HARMS = "Answers could reveal where a person grew up; we report only aggregates and keep answers on our servers."


def principal(client, scopes) -> Principal:
    return Principal("client", client.client_id, client.id, frozenset(scopes))


def seed(url: str, data_dir: Path) -> dict[str, str]:
    """A reviewer linked to a person, a pending application, and an answer held by the output check."""
    engine = create_engine(url)
    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    keys = process_keyring(url, data_dir)
    with sessions() as session, session.begin():
        chat = ScriptedChatModel(leaky)
        _, agent, chat, embedder, _ = build(session, ref="file:console.json", keys=keys, chat=chat)
        reviewer = create_client(session, "reviewers", ["review"], OPERATOR).client
        people.link_person(session, reviewer.client_id, REVIEWER_EMAIL, OPERATOR)
        team = create_client(session, "team", ["projects:apply", "individual:query"], OPERATOR).client
        applicant = principal(team, ["projects:apply", "individual:query"])
        approved = projects.apply(
            session, applicant, projects.Application("Markers", PURPOSE, HARMS, [], None, ["open"])
        )
        grant = ProjectScope.of(None, ["open"], 10, 100, datetime.now(UTC) + timedelta(days=30))
        projects.decide(
            session, Principal("client", "reviewer-0", None, frozenset({"review"})), approved.id, grant, "ok"
        )
        pending = projects.apply(session, applicant, projects.Application("Childhood homes", PURPOSE, HARMS, [], None,
                                                                          ["survey", "open"]))  # fmt: skip
        own = {"title": "Homes", "items": [{"key": "rooms", "type": "numeric", "question": "How many rooms had it?",
                                             "minimum": 1, "maximum": 30}]}  # fmt: skip
        add_instrument(session, applicant, pending.id, "homes", Source.JSON, json.dumps(own))
        request = OpenRequest(kind="open", questions=["What is your lucky charm?"], agents=[agent.id])
        job, _ = submit_job(session, applicant, approved.id, "console-1", request, Path("."))
        ids = {"pending": str(pending.id), "job": job.id, "agent": agent.id}
    door = AgentDoor(chat=chat, embedder=embedder, keys=keys, memory_token_budget=4000)
    run_job_task(sessions, door, ids["job"], ids["agent"], Path("."))
    with sessions() as session:
        held = session.scalars(select(WithheldAnswer)).one()
        ids["held"] = str(held.id)
    engine.dispose()
    return ids


def test_a_reviewer_signs_in_approves_and_releases(serve, chromium, fresh_database, tmp_path):
    from playwright.sync_api import expect

    found = seed(fresh_database, tmp_path / "server-data")
    with console_server(serve, REVIEWER_EMAIL) as (server, sub):
        page, errors = open_page(chromium, f"{server.url}/review")
        expect(page.locator("#signin-step")).to_be_visible()
        problems = check_screen(page, tmp_path, "review-signin")

        # At the identity provider (the local test provider asks only who one is), and back.
        sign_in(page, sub)
        expect(page.locator("#console-step")).to_be_visible()
        expect(page.locator("#email")).to_have_text(REVIEWER_EMAIL)
        cookies = {c["name"]: c for c in page.context.cookies()}
        session_cookie = cookies["agentbank_session"]
        assert session_cookie["httpOnly"] and session_cookie["sameSite"] == "Lax"
        assert page.evaluate("() => document.cookie").find("agentbank_session") < 0  # no script can read it

        # The application, with its purpose and harms; approved for survey items only, for 90 agents' answers.
        card = page.locator(f"article[data-project='{found['pending']}']")
        expect(card).to_contain_text("Childhood homes")
        expect(card).to_contain_text(HARMS)
        problems += check_screen(page, tmp_path, "review-console")
        card.get_by_label("Open questions").uncheck()
        card.get_by_label("Answers in all (quota)").fill("90")
        card.get_by_label("Only these agents (one id per line; empty: as asked)").fill(str(found["agent"]))
        card.get_by_label("Note to the team").fill("Survey items only, for now.")
        # The project's own instrument, every item as it will be asked; this version approved.
        expect(card.locator(".instruments")).to_contain_text("rooms (numeric): How many rooms had it? [1 to 30]")
        card.get_by_label("homes@1 — Homes").check()
        card.get_by_role("button", name="Approve").click()
        expect(page.locator("#message")).to_contain_text("Approved “Childhood homes”")
        expect(card).to_have_count(0)

        # The withheld answer: why it was held and what it says, then released.
        held = page.locator(f"article[data-withheld='{found['held']}']")
        expect(held).to_contain_text("contains the agent's canary")
        expect(held).to_contain_text("Markers")  # its project, by title
        expect(held.locator(".answer")).to_contain_text("my private marker is")
        expect(held.locator(".answer mark")).to_have_count(1)  # the canary, marked for the reviewer
        assert "marker is" not in held.locator(".answer mark").inner_text()
        held.get_by_role("button", name="Release to the team").click()
        expect(page.locator("#message")).to_contain_text(f"Answer {found['held']} released")
        expect(page.locator("#no-withheld")).to_be_visible()

        # The same session's cookie without its CSRF token changes nothing.
        forged = page.evaluate(
            """async (id) => (await fetch('/v1/projects/' + id + '/decision', {method: 'POST',
                 headers: {'Content-Type': 'application/json'}, body: JSON.stringify({approve: false})})).status""",
            found["pending"],
        )
        assert forged == 403

        # The same sign-in opens the other consoles with the client's own scopes: no open tier for a reviewer.
        page.goto(f"{server.url}/explore")
        expect(page.locator("#message")).to_contain_text("may not read the open tier")
        page.goto(f"{server.url}/review")
        page.get_by_role("button", name="Sign out").click()
        expect(page.locator("#signin-step")).to_be_visible()
        page.reload()
        expect(page.locator("#signin-step")).to_be_visible()  # the session is gone, not only the page

    engine = create_engine(fresh_database)
    with Session(engine) as session:
        project = session.get_one(Project, uuid.UUID(found["pending"]))
        assert project.status == "approved" and project.scope["query_types"] == ["survey"]
        assert project.scope["quota"] == 90 and project.scope["agents"] == [str(found["agent"])]
        assert project.scope["instruments"] == ["homes@1"]  # the version the reviewer read and ticked
        held_row = session.scalars(select(WithheldAnswer)).one()
        assert held_row.status == "released"
        actions = set(session.scalars(select(AuditEvent.action)).all())
        assert {"session.open", "project.approved", "review.withheld.decide"} <= actions
    engine.dispose()
    assert not problems, "\n".join(problems)
    assert not errors
