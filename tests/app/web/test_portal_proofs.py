"""The portal proves each use's receipt in the participant's own browser: it fetches the signed tree head,
checks the bank's signature and a witness's cosignature with WebCrypto, and recomputes the signed root
from each receipt and its inclusion proof. A proof or a receipt altered on the way is marked in red."""

from __future__ import annotations

import base64
import json

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from agentbank.audit import notes
from tests.app.web.interview_browser import check_screen
from tests.support.portal import WITNESS, WITNESS_NAME, participant_whose_agent_was_used, sign_and_cosign, sign_in

pytestmark = pytest.mark.slow

WITNESS_KEY = notes.Verifier(WITNESS_NAME, notes.COSIGNATURE, WITNESS.public_key()).vkey()


def a_later_use(database_url: str, seq_after: int) -> None:
    """One more use of the participant's agent, chained after the checkpoint: no signed head covers it yet."""
    engine = create_engine(database_url)
    try:
        with Session(engine) as session, session.begin():
            used = session.execute(
                text("SELECT agent_id, participant_id FROM audit_events WHERE action = 'job.answer' LIMIT 1")
            ).one()
            audit.record(session, audit.Actor("operator", "cli"), "operator.answer", "operator", agent_id=used[0],
                         participant_id=used[1], details={"purpose": "a later check", "kind": "survey"})  # fmt: skip
            session.flush()
            audit.sequence(session)
    finally:
        engine.dispose()


def test_each_use_is_proven_in_the_browser_and_a_forgery_is_marked(serve, chromium, fresh_database, tmp_path):
    from playwright.sync_api import expect

    server = serve(audit_witnesses=json.dumps([{"url": "http://127.0.0.1:9", "key": WITNESS_KEY}]))
    code, used_seq = participant_whose_agent_was_used(fresh_database, server.keys())
    size = sign_and_cosign(server, fresh_database)
    a_later_use(fresh_database, size)

    page = chromium().new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    proofs: list[str] = []
    page.on("request", lambda request: proofs.append(request.url) if "/v1/audit/proof/" in request.url else None)
    sign_in(page, server.url, code)
    summary = page.locator("#proof-summary")
    expect(summary).to_contain_text(f"Your browser checked 3 of 4 uses of your agent against the bank's signed "
                                    f"checkpoint of {size} entries")  # fmt: skip
    expect(summary).to_contain_text("its signature is valid, countersigned by 1 independent witness")
    expect(summary).to_contain_text("1 newer use is not in a checkpoint yet")
    used = page.locator(f"#uses-body .use[data-seq='{used_seq}'] .proof")
    expect(used).to_have_text(f"Checked in your browser: this receipt is entry {used_seq} of the bank's signed log "
                              f"of {size} entries.")  # fmt: skip
    expect(page.locator(".proof-ok")).to_have_count(3)
    expect(page.locator("#uses-body .proof").first).to_contain_text("Not yet in a signed checkpoint")  # newest first
    assert len(proofs) == 3 and all(f"tree_size={size}" in url for url in proofs)
    problems = check_screen(page, tmp_path, "portal-proofs")

    # A proof altered on its way: the browser's own recomputation no longer reaches the signed root.
    def altered_proof(route, request):
        body = json.loads(route.fetch().text())
        first = bytearray(base64.b64decode(body["hashes"][0]))
        first[0] ^= 1
        body["hashes"][0] = base64.b64encode(bytes(first)).decode()
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    page.route("**/v1/audit/proof/**", altered_proof)
    page.reload()
    expect(summary).to_contain_text("3 did not match: see the uses marked in red")
    expect(page.locator(".proof-bad")).to_have_count(4)  # three uses and the summary
    expect(page.locator(f"#uses-body .use[data-seq='{used_seq}'] .proof")).to_contain_text("does NOT match")
    problems += check_screen(page, tmp_path, "portal-proofs-forged")
    page.unroute("**/v1/audit/proof/**")

    # A receipt the bank changed after the fact (the list served differs from what was signed): caught too.
    def altered_receipt(route, request):
        uses = json.loads(route.fetch().text())
        for use in uses:
            if use["receipt"]["seq"] == used_seq:
                use["receipt"]["hash"] = "00" * 32
        route.fulfill(status=200, content_type="application/json", body=json.dumps(uses))

    page.route("**/v1/participant/audit", altered_receipt)
    page.reload()
    expect(page.locator(f"#uses-body .use[data-seq='{used_seq}'] .proof")).to_contain_text("does NOT match")
    expect(summary).to_contain_text("1 did not match")
    page.unroute("**/v1/participant/audit")

    # No proof at all (the bank busy, a limit reached) is said as such: nothing checked, nothing accused.
    page.route("**/v1/audit/proof/**", lambda route, request: route.fulfill(status=503, body="{}"))
    page.reload()
    expect(summary).to_contain_text("3 could not be checked just now")
    expect(page.locator(".proof-bad")).to_have_count(0)
    assert not problems, "\n".join(problems)
    assert not errors
