"""A focus group from the teams' console in a real browser: a team member signs in, chooses three agents and
writes the stimulus and the guide with the keyboard only, reads the dry run's estimate, starts the group and
follows it live (a worker on a slow scripted model runs it: a seat leaves when its participant withdraws, an
extraction attempt is a withheld silence) until it ends, then opens its report, which says it is simulated,
and downloads the JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import sessionmaker

from agentbank.access import people
from agentbank.access.clients import create_client
from agentbank.access.principals import Principal
from agentbank.access.scope import ProjectScope
from agentbank.audit import log as audit
from agentbank.db.models import Agent, AuditEvent, FocusGroupSeat
from agentbank.restricted import projects
from tests.app.web.consoles import console_server, open_page, sign_in
from tests.app.web.interview_browser import check_screen, screenshot
from tests.support.factories import build, process_keyring

pytestmark = pytest.mark.slow  # a server process, a worker, an identity provider and a browser

OPERATOR = audit.Actor("operator", "test")
EMAIL = "ada.team@example.org"
PURPOSE = "How residents discuss a community garden plan in a group, as simulated agents."
REPO = Path(__file__).resolve().parents[3]
MODEL_DELAY_S = 1.0  # each moderator and seat call of the worker's model: long enough to watch the group live
LEAVING = "FOCUS_GROUP_LEAVING"  # the participant who withdraws mid-group, for the worker process


def seed(url: str, data_dir: Path) -> dict[str, object]:
    """A team's project approved for focus groups, over three agents of three participants."""
    engine = create_engine(url)
    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    keys = process_keyring(url, data_dir)
    with sessions() as session, session.begin():
        first, agent, chat, embedder, _ = build(session, ref="file:garden0.json", keys=keys, turns=6)
        built = [(first, agent)]
        for n in (1, 2):
            participant, other, *_ = build(session, ref=f"file:garden{n}.json", keys=keys, turns=6, chat=chat,
                                           embedder=embedder)  # fmt: skip
            built.append((participant, other))
        team = create_client(session, "team", ["projects:apply", "individual:query"], OPERATOR).client
        people.link_person(session, team.client_id, EMAIL, OPERATOR)
        member = Principal("client", team.client_id, team.id, frozenset({"projects:apply", "individual:query"}))
        project = projects.apply(session, member, projects.Application("Gardens", PURPOSE, PURPOSE, [], None,
                                                                       ["focus_group"]))  # fmt: skip
        grant = ProjectScope.of(None, ["focus_group"], 12, 100, datetime.now(UTC) + timedelta(days=30))
        projects.decide(session, Principal("client", "reviewer", None, frozenset({"review"})), project.id, grant, "ok")
        found = {"project": str(project.id), "agents": {str(a.id): p.id for p, a in built}}
    engine.dispose()
    return found


def run_worker() -> None:
    """The worker process: ``agentbank worker --burst`` whose fake model is the focus-group script, each of its
    group calls taking ``MODEL_DELAY_S``; the participant named in ``FOCUS_GROUP_LEAVING`` withdraws before the
    moderator's fourth call (after every seat answered the first question)."""
    from agentbank.participants.withdrawal import withdraw
    from agentbank.providers import fakes
    from tests.support.groups import GroupModel

    url, leaving = os.environ["AGENTBANK_DATABASE_URL"], uuid.UUID(os.environ[LEAVING])

    def leave() -> None:
        engine = create_engine(url)
        keys = process_keyring(url, Path(os.environ["AGENTBANK_DATA_DIR"]))
        with sessionmaker(bind=engine)() as session, session.begin():
            withdraw(session, keys, leaving, audit.Actor("participant", str(leaving)), ledger=None)
        engine.dispose()

    model = GroupModel(on_moderator={4: leave})

    def slow(messages, schema):
        if {"action", "stance"} & set((schema or {}).get("properties", {})):
            time.sleep(MODEL_DELAY_S)
        return model(messages, schema)

    fakes.echo_minimal = slow  # the ``fake`` chat provider answers with it (looked up when the worker builds it)
    from app.cli import main

    sys.argv = ["agentbank", "worker", "--burst"]
    main()


def seat_two(url: str, found: dict[str, object]) -> uuid.UUID:
    """The participant behind Seat 2 of the one group there is."""
    engine = create_engine(url)
    with sessionmaker(bind=engine)() as session:
        agent = session.scalars(select(FocusGroupSeat.agent_id).where(FocusGroupSeat.seat == 2)).one()
        participant = session.get_one(Agent, agent).participant_id
    engine.dispose()
    assert participant == found["agents"][str(agent)]
    return participant


def test_a_team_runs_a_focus_group_from_the_console(serve, chromium, fresh_database, tmp_path):
    from playwright.sync_api import expect

    found = seed(fresh_database, tmp_path / "server-data")
    with console_server(serve, EMAIL) as (server, sub):
        page, errors = open_page(chromium, f"{server.url}/projects")
        sign_in(page, sub)
        expect(page.locator("#email")).to_have_text(EMAIL)
        card = page.locator(f"article[data-project='{found['project']}']")
        expect(card).to_contain_text("Focus groups")  # what the project may ask, in words
        expect(card.get_by_role("heading", name="Ask the agents")).to_have_count(0)  # no survey or open questions
        form = card.locator("form.group-form")
        expect(form.get_by_role("group", name="Seats: choose 2 to 12 agents")).to_be_visible()
        boxes = form.locator("input[name=seats]")
        expect(boxes).to_have_count(3)

        # The whole form with the keyboard: each seat ticked with Space, each field reached with Tab.
        boxes.first.focus()
        keys = page.keyboard
        for n in range(3):
            if n:
                keys.press("Tab")
            expect(boxes.nth(n)).to_be_focused()
            keys.press("Space")
            expect(boxes.nth(n)).to_be_checked()
        keys.press("Tab")
        expect(form.get_by_label("The stimulus is")).to_be_focused()
        keys.press("ArrowDown")  # from "A text" to "A concept"
        expect(form.get_by_label("The stimulus is")).to_have_value("concept")
        keys.press("Tab")
        expect(form.get_by_label("Stimulus: what the group discusses")).to_be_focused()
        keys.type("A community garden on the lot beside the plant.")
        keys.press("Tab")
        expect(form.get_by_label("Topics and questions, one per line")).to_be_focused()
        keys.type("The plan:\nWhat is your first reaction?\nWhat is your lucky charm?")
        keys.press("Tab")
        expect(form.get_by_label("Probes, one per line (optional)")).to_be_focused()
        keys.type("Can you say more about that?")
        keys.press("Tab")
        expect(form.get_by_label("Probes per question")).to_be_focused()
        keys.press("Tab")
        expect(form.get_by_label("Turn budget (agent turns in all)")).to_be_focused()
        keys.press("Control+A")
        keys.type("8")
        keys.press("Tab")
        expect(form.get_by_role("button", name="Estimate the cost")).to_be_focused()
        keys.press("Enter")
        estimate = form.locator(".group-estimate")
        # Three seats and one probe a question, within a budget of 8: two rounds of four agent turns.
        expect(estimate).to_contain_text("Estimate: 8 agent turn(s) in 2 round(s), 16 model call(s)")
        expect(estimate).to_contain_text("Round 1: 4 turn(s), 8 call(s); Round 2: 4 turn(s), 8 call(s)")
        expect(estimate).to_contain_text("price: free")
        problems = check_screen(page, tmp_path, "focus-group-form")
        form.get_by_role("button", name="Estimate the cost").focus()
        keys.press("Tab")
        expect(form.get_by_role("button", name="Start the group")).to_be_focused()
        keys.press("Enter")
        expect(estimate).to_contain_text("The focus group is queued with 3 seats")
        group = card.locator("section.group")
        expect(group).to_have_count(1)
        expect(group.get_by_role("heading", level=4)).to_be_focused()  # the keyboard is taken to the group
        expect(group.locator(".group-status")).to_contain_text("Waiting for a worker")
        transcript = group.locator(".transcript")
        expect(transcript).to_have_attribute("aria-live", "polite")

        leaving = seat_two(fresh_database, found)
        log = (tmp_path / "worker.log").open("w")
        worker = subprocess.Popen(  # this interpreter, running the test's own module's run_worker
            [sys.executable, "-c", "from tests.app.web.test_focus_group_console import run_worker; run_worker()"],
            env={**server.environment(), LEAVING: str(leaving)}, cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            # Live: the turns appear while the group runs, each by its seat.
            expect(group.locator(".group-status")).to_contain_text("Running", timeout=60_000)
            first = transcript.locator("li[data-turn='2']")
            expect(first).to_contain_text("Seat 1: Speaking from seat 1", timeout=30_000)
            expect(transcript.locator("li[data-turn='1']")).to_contain_text(
                "Moderator to Seat 1: What is your first reaction?"
            )
            expect(group.locator(".group-status")).to_contain_text("Running")
            problems += check_screen(page, tmp_path, "focus-group-live")
            expect(group.locator(".group-status")).to_contain_text("Ended", timeout=90_000)
            assert worker.wait(timeout=60) == 0, (tmp_path / "worker.log").read_text()
        finally:
            if worker.poll() is None:
                worker.terminate()
                worker.wait(timeout=30)
            log.close()

        expect(transcript.locator("li").first).to_contain_text("Moderator: Welcome")
        expect(transcript).to_contain_text("Seat 2: (left the group: its participant withdrew)")
        # What Seat 2 said before its participant withdrew is gone from the transcript; its seat is marked.
        expect(transcript.locator("li[data-turn='4']")).to_have_text(
            "Seat 2: (words removed: its participant withdrew)"
        )
        expect(group.locator(".seats")).to_contain_text("Seat 2: agent")
        expect(group.locator(".seats li").nth(1)).to_contain_text("(left the group)")
        # The lucky charm is an extraction attempt: each remaining seat's answer is withheld, a silence.
        silences = transcript.locator("li.turn-silence")
        expect(silences).to_have_count(2)
        for n in range(2):
            expect(silences.nth(n)).to_contain_text("(silence: withheld)")
        expect(transcript.locator("li").last).to_contain_text("Moderator: That is all our time.")
        problems += check_screen(page, tmp_path, "focus-group-done")

        # The JSON, downloaded from its link (the session's cookie carries the read).
        with page.expect_download() as downloading:
            group.get_by_role("link", name="Download the JSON").click()
        result = json.loads(Path(downloading.value.path()).read_text(encoding="utf-8"))
        assert downloading.value.suggested_filename.endswith(".json")
        assert result["framing"]["simulated"] is True and result["status"] == "done"
        assert [s["status"] for s in result["seats"]] == ["active", "removed", "active"]

        # The report, opened with the keyboard in a tab of its own: it says first that the group is simulated.
        group.get_by_role("link", name="Open the report").focus()
        with page.context.expect_page() as opening:
            keys.press("Enter")
        report = opening.value
        report.wait_for_load_state()
        expect(report.get_by_role("heading", level=1)).to_have_text("Simulated focus group")
        expect(report.locator(".frame")).to_contain_text("This focus group is simulated")
        expect(report.locator(".frame")).to_contain_text("It is not what the people would have said.")
        screenshot(report, tmp_path, "focus-group-report-1280")
        report.close()

        # A reload follows the groups started from this tab again: this one, ended, with its report.
        page.reload()
        again = card.locator("section.group")
        expect(again.locator(".group-status")).to_contain_text("Ended — 5 agent turn(s) in all")
        expect(again.locator(".transcript li")).to_have_count(13)
        expect(again.get_by_role("link", name="Open the report (new tab)")).to_be_visible()

    engine = create_engine(fresh_database)
    with sessionmaker(bind=engine)() as session:
        actions = set(session.scalars(select(AuditEvent.action)).all())
        assert {"focus_group.estimate", "focus_group.submit", "focus_group.read", "focus_group.results.read",
                "focus_group.done", "output.withheld"} <= actions  # fmt: skip
    engine.dispose()
    assert not problems, "\n".join(problems)
    assert not errors
