"""The coordinators' console in a real browser: a coordinator signs in through a local OpenID Connect
provider and reads a study's funnel, drop-off, quality flags and participants by stage, downloads its
progress, invites more people (their codes downloaded once) and revokes the unused invitations."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import sessionmaker

from agentbank.access import people
from agentbank.access.clients import create_client
from agentbank.audit import log as audit
from agentbank.studies import invitations as study_invitations
from agentbank.studies.stages import Stage
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from interviewer.session import invitations as interview_invitations
from tests.app.web.consoles import console_server, open_page, sign_in
from tests.app.web.interview_browser import check_screen
from tests.support.factories import process_keyring
from tests.support.interviews import interviewer_model, turn_of
from tests.support.study_factories import CONSENT, COORDINATOR, new_study, populate, study_script

pytestmark = pytest.mark.slow  # a server process, an identity provider and a browser

EMAIL = "mary.coordinator@example.org"
PLAN = {Stage.INVITED: 3, Stage.IN_MODULE: 2, Stage.PAUSED: 1, Stage.CONFIRMED: 2, Stage.RETEST_DUE: 1,
        Stage.WITHDREW: 1}  # fmt: skip
WORDS = ("sea", "bakeries", "city")  # what the scripted participants said: never on the console


def seed(url: str, data_dir: Path) -> dict[str, object]:
    """A coordinator linked to a person, and a study with participants at several stages, one flagged."""
    engine = create_engine(url)
    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    keys = process_keyring(url, data_dir)
    services = Services(keys=keys, chat=interviewer_model(0), transcriber=FakeTranscriber())
    with sessions() as session:
        coordinator = create_client(session, "coordinators", ["studies"], audit.Actor("operator", "test")).client
        people.link_person(session, coordinator.client_id, EMAIL, audit.Actor("operator", "test"))
        script = study_script()
        study = new_study(session, script, name="Life stories pilot", target=20, owner=coordinator.id)
        at = populate(session, services, study, script, PLAN)
        slow = study_invitations.issue(session, study, 1, COORDINATOR, datetime.now(UTC))[0]
        started = interview_invitations.start(session, services, slow.code, CONSENT, script=script)
        turn_of(session, services, started.interview).answer("yes", seconds=200.0)  # over the budget: flagged
        session.commit()
    engine.dispose()
    return {"at": at, "slow": slow.id}


def test_a_coordinator_reads_a_study_and_invites_more(serve, chromium, fresh_database, tmp_path):
    from playwright.sync_api import expect

    found = seed(fresh_database, tmp_path / "server-data")
    with console_server(serve, EMAIL) as (server, sub):
        page, errors = open_page(chromium, f"{server.url}/studies")
        expect(page.locator("#signin-step")).to_be_visible()
        problems = check_screen(page, tmp_path, "studies-signin")
        sign_in(page, sub)
        expect(page.locator("#console-step")).to_be_visible()
        expect(page.locator("#study")).to_have_value(page.locator("#study option").first.get_attribute("value"))

        funnel = page.locator("#funnel tbody tr")
        expect(funnel.first).to_contain_text("invited")
        expect(funnel.first.locator("td").first).to_have_text("10")  # 3 unused, 7 in the study, the withdrawn apart
        expect(page.locator("#withdrew")).to_contain_text("1 withdrew")
        rows = page.locator("#participants tbody tr")
        expect(rows).to_have_count(10)
        expect(page.locator("#flags")).to_contain_text(f"Invitation {found['slow']}")
        expect(page.locator("#flags")).to_contain_text("long")
        expect(page.locator("#modules tbody tr")).to_have_count(2)
        problems += check_screen(page, tmp_path, "studies-console")
        text = page.locator("main").inner_text()
        assert not any(word in text for word in WORDS)

        page.get_by_label("Show").select_option("paused")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("paused in module 2 of 2")

        with page.expect_download() as progress:
            page.get_by_role("link", name="Download progress (CSV)").click()
        exported = Path(progress.value.path()).read_text()
        assert exported.startswith("invitation,stage,since") and len(exported.strip().split("\n")) == 11
        assert not any(word in exported for word in WORDS)

        page.get_by_label("How many").fill("3")
        with page.expect_download() as issued:
            page.get_by_role("button", name="Create invitations and download them (CSV)").click()
        codes = Path(issued.value.path()).read_text().strip().split("\n")
        assert codes[0] == "invitation,code,link" and len(codes) == 4 and "/interview#invite=" in codes[1]
        expect(page.locator("#message")).to_contain_text("3 invitations created")

        page.get_by_role("button", name="Revoke every unused invitation").click()
        expect(page.locator("#message")).to_contain_text("6 unused invitations revoked")
        expect(page.locator("#withdrew")).to_contain_text("6 invitations revoked or expired unused")
    assert not problems, "\n".join(problems)
    assert not errors
