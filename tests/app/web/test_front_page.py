"""The front page and the explorer as a newcomer meets them, in a real browser: what the bank is, a way in for
each person, the bank's state in words; before the first release, progress instead of an error; then the
first chart, drawn by itself once the release is cut, with the demo's settings stated."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from agentbank.access.clients import create_client
from agentbank.audit import log as audit
from agentbank.core.settings import Settings
from agentbank.instruments import load_instrument
from agentbank.keys.crypto import KeyRing
from agentbank.publication.privacy import Budget
from agentbank.publication.releases import Policy, cut_release
from agentbank.runtime.demo import seed_demo_bank
from agentbank.runtime.demo_settings import DEMO_SETTINGS
from tests.app.api.factories import NoNoise, demo_agents
from tests.app.web.consoles import open_page
from tests.app.web.interview_browser import check_screen
from tests.support.factories import process_keyring

pytestmark = pytest.mark.slow  # a server process and a browser

OPERATOR = audit.Actor("operator", "test")


def in_database(url: str, work):
    engine = create_engine(url)
    try:
        with Session(engine) as session, session.begin():
            return work(session)
    finally:
        engine.dispose()


def demo_bank(url: str, keys: KeyRing) -> tuple[str, str]:
    """The demo's fictional people ingested and their builds queued, as `agentbank serve` seeds an empty bank;
    and a reader's API client."""

    def seed(session: Session) -> tuple[str, str]:
        assert seed_demo_bank(session, keys) == 12
        reader = create_client(session, "reader", ["aggregate:read"], OPERATOR)
        return reader.client.client_id, reader.secret

    return in_database(url, seed)


def next_release(url: str, keys: KeyRing, codes: list[int], *, offset: int = 0, policy: Policy | None = None) -> None:
    """Agents for demo people (from the ``offset``-th) with these answers, and the release a worker cuts (under
    the demo's policy unless another is given; no noise drawn, so the figures are known)."""

    def cut(session: Session) -> None:
        demo_agents(session, codes, offset=offset, keys=keys)
        gss = load_instrument("gss", Path("."))
        outcome = cut_release(session, keys, lambda _: gss, policy or DEMO_SETTINGS.policy(Settings()), audit.SYSTEM,
                              noise=NoNoise())  # fmt: skip
        assert outcome.release is not None, outcome.reason

    in_database(url, cut)


def test_the_front_page_says_what_the_bank_is_and_how_far_along(serve, chromium, fresh_database, tmp_path):
    from playwright.sync_api import expect

    keys = process_keyring(fresh_database, tmp_path / "server-data")
    demo_bank(fresh_database, keys)
    server = serve()
    page, errors = open_page(chromium, f"{server.url}/")
    expect(page.get_by_role("heading", name="Agent bank", level=1)).to_be_visible()
    expect(page.locator(".lead")).to_contain_text("generative agents of real people")
    state = page.locator("#state")
    expect(state).to_contain_text("0 agents built and 12 being built; none has a validity card")
    expect(state).to_contain_text("The open tier has no release yet: 0 of the 5 agents the first release needs")
    demo = page.locator("#demo")
    expect(demo).to_be_visible()
    expect(demo).to_contain_text("fictional")
    expect(demo).to_contain_text("mu = 8")
    expect(demo).to_contain_text("k = 10 and mu = 1")  # the bank's own settings, once a real interview joins
    for person, link, path in [
        ("If you took part", "Take the interview", "/interview"), ("If you took part", "Your survey", "/survey"),
        ("If you took part", "Your agent", "/portal"), ("If you are a researcher", "The explorer", "/explore"),
        ("If you are a researcher", "The API's documentation", "/docs"),
        ("If you review for the bank", "The reviewers' console", "/review"),
        ("If your team has a project", "The teams' console", "/projects"),
    ]:  # fmt: skip
        entry = page.locator(".person", has=page.get_by_role("heading", name=person))
        expect(entry.get_by_role("link", name=link)).to_have_attribute("href", path)
    problems = check_screen(page, tmp_path, "front-before-release")

    next_release(fresh_database, keys, [1, 2, 1, 2, 1])
    page.reload()
    # The queued builds stand (no worker here), but an agent already built is no longer also "being built".
    expect(state).to_contain_text("5 agents built and 7 being built")
    expect(state).to_contain_text("Release 1 of the open tier is in force under the demo's settings")
    problems += check_screen(page, tmp_path, "front-released")
    page.get_by_role("link", name="The explorer").click()
    expect(page.get_by_role("heading", name="Open tier explorer")).to_be_visible()
    assert not problems, "\n".join(problems)
    assert not errors


def test_the_explorer_shows_progress_then_the_first_chart(serve, chromium, fresh_database, tmp_path):
    from playwright.sync_api import expect

    keys = process_keyring(fresh_database, tmp_path / "server-data")
    reader_id, reader_secret = demo_bank(fresh_database, keys)
    server = serve()
    page, errors = open_page(chromium, f"{server.url}/explore")
    # Before anyone signs in, the page says how far along the bank is, and that its settings are the demo's.
    expect(page.locator("#bank-state")).to_contain_text("0 of the 5 agents the first release needs have answered")
    expect(page.locator("#demo-settings")).to_contain_text("fictional")
    page.get_by_label("Client id").fill(reader_id)
    page.get_by_label("Client secret").fill(reader_secret)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_label("Find an item").fill("cappun")
    page.get_by_role("button", name="Show table").click()
    message = page.locator("#message")
    expect(message).to_contain_text("The open tier has no release yet: 0 of the 5 agents the first release needs")
    expect(message).to_contain_text("shows the table once the first release is cut")
    assert "error" not in (message.get_attribute("class") or "")  # progress, not a failure
    expect(page.locator("#result")).to_be_hidden()
    problems = check_screen(page, tmp_path, "explore-before-release")

    # A first release is cut while the page waits, too noisy to show four people (as a real bank's would be):
    # the table comes by itself, says why it shows nothing, and waits for the next release.
    next_release(fresh_database, keys, [1, 2, 1, 2], policy=Policy(4, Budget(mu=1.0)))
    expect(page.locator("#result")).to_be_visible(timeout=40_000)
    hidden = page.locator("#hidden-groups")
    expect(hidden).to_contain_text("too few people in this group to show beside the release's noise")
    expect(hidden).to_contain_text("Everyone")
    expect(hidden).to_contain_text("shows the table again when the next release is cut")
    expect(page.locator("#groups .bar")).to_have_count(0)
    problems += check_screen(page, tmp_path, "explore-first-release-hidden")

    # The next release, with one more agent under the demo's settings: the chart is drawn without a click.
    next_release(fresh_database, keys, [1], offset=4)
    everyone = page.locator(".group", has_text="Everyone")
    expect(everyone).to_be_visible(timeout=40_000)
    expect(everyone).to_contain_text("n ≈ 5")
    expect(everyone.locator(".bar")).to_have_count(2)  # favour and oppose, each drawn
    page.get_by_label("Weighted to population margins").uncheck()
    page.get_by_role("button", name="Show table").click()
    expect(everyone.locator(".bar-row", has_text="favor")).to_contain_text("60.0%")  # unweighted: 3 of 5 favour
    expect(page.locator("#about")).to_contain_text("demo's settings")
    expect(page.get_by_label("Item", exact=True).locator("option").first).to_contain_text("in the release")
    problems += check_screen(page, tmp_path, "explore-first-chart")
    assert not problems, "\n".join(problems)
    assert not errors
