"""A use edited in the database after it was logged is marked in red in the participant's own browser, though
its receipt (its chain hash) was left as it was: the page proves the use as it shows it, not the receipt alone."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from tests.support.portal import participant_whose_agent_was_used, sign_and_cosign, sign_in

pytestmark = pytest.mark.slow


def owner(database_url: str, sql: str, **params) -> None:
    """What the database's owner can do with the append-only triggers off."""
    engine = create_engine(database_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("ALTER TABLE audit_events DISABLE TRIGGER USER"))
            conn.execute(text(sql), params)
            conn.execute(text("ALTER TABLE audit_events ENABLE TRIGGER USER"))
    finally:
        engine.dispose()


def test_a_use_edited_after_it_was_logged_no_longer_proves_in_the_browser(serve, chromium, fresh_database):
    from playwright.sync_api import expect

    server = serve()
    code, used_seq = participant_whose_agent_was_used(fresh_database, server.keys())
    size = sign_and_cosign(server, fresh_database)
    page = chromium().new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, server.url, code)
    used = page.locator(f"#uses-body .use[data-seq='{used_seq}']")
    expect(used.locator(".proof")).to_have_text(
        f"Checked in your browser: this receipt is entry {used_seq} of the bank's signed log of {size} entries."
    )
    receipt = used.locator(".receipt code").inner_text()

    # What was asked is changed, and nothing else: the receipt the page shows is the same.
    owner(fresh_database, """UPDATE audit_events SET details = details || '{"items": ["grass"]}' WHERE seq = :s""",
          s=used_seq)  # fmt: skip
    page.reload()
    expect(used.locator(".proof")).to_contain_text("does NOT match")
    # Its neighbours' proofs pass through its leaf, as the bank now computes it: they fail too, and say so.
    expect(page.locator("#proof-summary")).to_contain_text("did not match: see the uses marked in red")
    assert used.locator(".receipt code").inner_text() == receipt
    assert not errors
