"""The open tier's explorer in a real browser, as a researcher uses it: sign in with an API client, find
an item, break it down, read the weighted chart with its intervals, download the table, copy the code."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import httpx
import pyreadstat
import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from agentbank.access import people
from agentbank.access.clients import create_client
from agentbank.audit import log as audit
from tests.app.api.factories import ask_tables, exact_release, population
from tests.app.web.consoles import console_server, open_page
from tests.app.web.interview_browser import check_screen

pytestmark = pytest.mark.slow  # a server process and a browser

OPERATOR = audit.Actor("operator", "test")
# 26 men (14 favour) and 26 women (10 favour): every group by sex is shown, and the sample leans white,
# so the weights move the shares. The 10 black agents are fewer than k = 12: by race, they are hidden.
BANK = (
    [({"sex": 1, "race": 1}, 1)] * 14
    + [({"sex": 1, "race": 1}, 2)] * 12
    + [({"sex": 2, "race": 1}, 1)] * 10
    + [({"sex": 2, "race": 1}, 2)] * 6
    + [({"sex": 2, "race": 2}, 2)] * 10
)


def seed(url: str) -> dict[str, tuple[str, str]]:
    engine = create_engine(url)
    with Session(engine) as session, session.begin():
        population(session, BANK)
        ask_tables(session, ["cappun"], ("sex", "race"))  # a researcher asked for it before this release
        exact_release(session, k=12)  # no noise drawn: the figures are checked by hand
        reader = create_client(session, "reader", ["aggregate:read"], OPERATOR)
        team = create_client(session, "team", ["projects:apply"], OPERATOR)
        found = {"reader": (reader.client.client_id, reader.secret), "team": (team.client.client_id, team.secret)}
    engine.dispose()
    return found


def table_as_served(server_url: str, client: tuple[str, str], **params: str) -> dict:
    token = httpx.post(f"{server_url}/oauth/token", auth=client, data={"grant_type": "client_credentials"})
    headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
    url = f"{server_url}/v1/open/instruments/gss/items/cappun/distribution"
    return httpx.get(url, params=params, headers=headers).json()


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def test_a_researcher_explores_a_weighted_table(serve, chromium, fresh_database, tmp_path):
    from playwright.sync_api import expect

    clients = seed(fresh_database)
    server = serve()
    page, errors = open_page(chromium, f"{server.url}/explore")
    problems = check_screen(page, tmp_path, "explore-signin")

    # A wrong secret, then a client that may not read the open tier: each said in plain words.
    reader_id, reader_secret = clients["reader"]
    page.get_by_label("Client id").fill(reader_id)
    page.get_by_label("Client secret").fill("wrong")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#message")).to_contain_text("not recognised")
    page.get_by_label("Client id").fill(clients["team"][0])
    page.get_by_label("Client secret").fill(clients["team"][1])
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#message")).to_contain_text("no aggregate:read scope")

    page.get_by_label("Client id").fill(reader_id)
    page.get_by_label("Client secret").fill(reader_secret)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#explore-step")).to_be_visible()
    stored = page.evaluate("() => Object.values(sessionStorage).join(' ')")
    assert reader_secret not in stored and stored  # the token, for the tab; never the secret
    assert page.evaluate("() => Object.values(localStorage)") == []

    # Find the item by words, break it down by sex, weighted (the default).
    page.get_by_label("Find an item").fill("death penalty murder")
    expect(page.get_by_label("Item", exact=True).locator("option").first).to_have_attribute("value", "cappun")
    page.get_by_label("Break down by").select_option(label="Sex")
    page.get_by_role("button", name="Show table").click()
    expect(page.locator("#result")).to_be_visible()
    served = table_as_served(server.url, clients["reader"], breakdowns="sex")
    cells = {(c["group"]["sex"], c["code"]): c for c in served["cells"]}
    female_favour = cells[("female", 1)]
    assert abs(female_favour["weighted_share"] - female_favour["share"]) > 0.01  # the weights move this share
    female = page.locator(".group", has_text="Sex: female")
    expect(female).to_contain_text("n ≈ 26")
    expect(female).to_contain_text("design effect")
    expected = f"{pct(female_favour['weighted_share'])} ({pct(female_favour['weighted_interval'][0])}–"
    expect(female.locator(".bar-row", has_text="favor")).to_contain_text(expected)
    expect(page.locator(".group", has_text="Sex: unknown")).to_have_count(0)  # nobody: not charted, but named
    expect(page.locator("#hidden-groups")).to_contain_text("Sex: unknown")
    expect(page.locator("#about")).to_contain_text("GSS 2022")
    expect(page.locator("#validity")).to_contain_text("Not validated")
    # How far the release's distribution lies from the GSS's own, as the API serves it.
    expect(page.locator("#fidelity")).to_contain_text(f"lies {pct(served['fidelity']['tvd'])} away")
    expect(page.locator("#table")).to_contain_text("Design effect")
    problems += check_screen(page, tmp_path, "explore-weighted-by-sex")

    # The download is the bank's own CSV of the same table.
    with page.expect_download() as downloading:
        page.get_by_role("button", name="Download CSV").click()
    download = downloading.value
    assert download.suggested_filename == "gss-cappun-sex.csv"
    rows = list(csv.DictReader(io.StringIO(Path(download.path()).read_text(encoding="utf-8"))))
    row = next(r for r in rows if r["sex"] == "female" and r["code"] == "1")
    assert float(row["weighted_share"]) == female_favour["weighted_share"] and row["count"] == "10"
    with page.expect_download() as downloading:
        page.get_by_role("button", name="Download Parquet").click()
    assert downloading.value.suggested_filename == "gss-cappun-sex.parquet"
    with page.expect_download() as downloading:  # the same table labelled, for Stata
        page.get_by_role("button", name="Download Stata (.dta)").click()
    assert downloading.value.suggested_filename == "gss-cappun-sex.dta"
    _, meta = pyreadstat.read_dta(downloading.value.path())
    assert meta.variable_value_labels["code"][1] == "favor"
    # The same query as code, with placeholders for the credentials.
    for language in ("curl", "python", "r"):
        code = page.locator(f"#code-{language}").inner_text()
        assert "cappun" in code and reader_secret not in code and reader_id not in code
    assert 'breakdowns=["sex"]' in page.locator("#code-python").inner_text()
    assert 'bank_distribution(bank, "gss", "cappun", breakdowns = c("sex"))' in page.locator("#code-r").inner_text()

    # By race: the black agents are too few to show beside the release's noise: hidden, and said why.
    page.get_by_label("Break down by").select_option(label="Race")
    page.get_by_role("button", name="Show table").click()
    expect(page.locator("#hidden-groups")).to_contain_text("too few people")
    expect(page.locator("#hidden-groups")).to_contain_text("Race: black")
    expect(page.locator(".group", has_text="Race: black")).to_have_count(0)  # no bars, no 100%
    expect(page.locator("#table")).to_contain_text("hidden")
    problems += check_screen(page, tmp_path, "explore-by-race")

    # Back to sex, unweighted, with the keyboard only.
    page.get_by_label("Break down by").select_option(label="Sex")
    page.get_by_label("Weighted to population margins").focus()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")  # to "Show table"
    page.keyboard.press("Enter")
    expect(page.locator("#chart-caption")).to_contain_text("Unweighted")
    expect(female.locator(".bar-row", has_text="favor")).to_contain_text(pct(female_favour["share"]))

    # A two-way table a researcher asked for before the cut was measured with the release: it is there at once.
    page.get_by_label("and by").select_option(label="Race")
    page.get_by_role("button", name="Show table").click()
    expect(page.locator("#chart-caption")).to_contain_text("by Sex and Race")

    # One nobody asked for is queued for the next cut, and the page says so in plain words.
    page.get_by_label("and by").select_option(label="Region")
    page.get_by_role("button", name="Show table").click()
    expect(page.locator("#message")).to_contain_text("It is queued: the next release measures it")
    expect(page.locator("#result")).to_be_hidden()
    problems += check_screen(page, tmp_path, "explore-queued")  # at 1280 and 375 px, with the accessibility check

    assert not problems, "\n".join(problems)
    assert not errors


def test_a_researcher_signs_in_with_the_institution_and_sees_a_chart(serve, chromium, fresh_database, tmp_path):
    from playwright.sync_api import expect

    clients = seed(fresh_database)
    engine = create_engine(fresh_database)
    with Session(engine) as session, session.begin():
        people.link_person(session, clients["reader"][0], "ida.researcher@example.org", OPERATOR)
    engine.dispose()
    with console_server(serve, "ida.researcher@example.org") as (server, sub):
        page, errors = open_page(chromium, f"{server.url}/explore")
        page.get_by_role("link", name="sign in with your institution").click()
        page.locator("input[name='sub']").fill(sub)
        page.get_by_role("button", name="Authorize").click()
        expect(page.locator("#explore-step")).to_be_visible()  # back at the explorer, signed in
        assert page.evaluate("() => Object.values(sessionStorage)") == []  # the session is the cookie alone
        page.get_by_label("Find an item").fill("cappun")
        page.get_by_role("button", name="Show table").click()
        expect(page.locator("#groups .bar-row").first).to_contain_text("%")
        with page.expect_download() as downloading:
            page.get_by_role("button", name="Download CSV").click()
        assert "weighted_share" in Path(downloading.value.path()).read_text(encoding="utf-8").splitlines()[0]
        page.get_by_role("button", name="Sign out").click()
        expect(page.locator("#signin-step")).to_be_visible()
        page.reload()
        expect(page.locator("#signin-step")).to_be_visible()
        problems = check_screen(page, tmp_path, "explore-signed-out")
    assert not problems, "\n".join(problems)
    assert not errors
