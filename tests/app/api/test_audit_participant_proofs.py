"""A participant's proof covers the use as their portal shows it, not only its receipt.

The attack: the database's owner edits what an event says (its purpose, what was asked, when, by whom)
and leaves its chain hash alone. The participant's page proves the receipt it is given, and the receipt
was unchanged, so the edited use still proved. Now the leaf is computed from what the page shows, so the
edit breaks the proof the participant's browser checks. ``browser_leaf`` is what ``proofs.js`` computes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, text

from agentbank.audit import entries, notes
from agentbank.audit.log import Actor, record, sequence
from agentbank.audit.merkle import leaf_hash, verify_inclusion
from agentbank.building.transcripts import store_interview
from agentbank.db.models import AuditEvent
from tests.support.factories import interview

OPERATOR = Actor("operator", "cli")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PROOFS_JS = Path(__file__).parents[3] / "app" / "web" / "proofs.js"


def browser_leaf(use: dict, proof: dict) -> bytes:
    """The leaf the portal's page hashes for a use it lists (an older server's proofs name no version: 1)."""
    receipt = use["receipt"]["hash"]
    if proof.get("leaf_version", 1) == 1:
        return leaf_hash(bytes.fromhex(receipt))
    at = datetime.fromisoformat(use["at"].replace("Z", "+00:00"))
    view = {
        "v": 2, "hash": receipt, "at": (at - EPOCH) // timedelta(microseconds=1),
        "action": use["action"], "tier": use["tier"], "actor_kind": use["actor_kind"],
        "project_id": (use["project"] or {}).get("id"), "purpose": use["purpose"], "asked": use["asked"],
        "outcome": use["outcome"],
    }  # fmt: skip
    canonical = json.dumps(view, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return leaf_hash(hashlib.sha256(canonical).digest())


def signed_head(api) -> notes.TreeHead:
    return notes.TreeHead.parse(notes.Note.parse(api.client.get("/v1/audit/checkpoint").json()["note"]).text)


def checked_in_browser(api, participant, action: str, size: int, root: bytes) -> bool:
    """What the participant's page concludes for their use ``action``: its proof, against the signed head."""
    uses = api.client.get("/v1/participant/audit", headers=api.participant_headers(participant)).json()
    use = next(u for u in uses if u["action"] == action)
    proof = api.client.get(f"/v1/audit/proof/{use['receipt']['seq']}", params={"tree_size": size}).json()
    hashes = [base64.b64decode(h) for h in proof["hashes"]]
    return verify_inclusion(browser_leaf(use, proof), use["receipt"]["seq"] - 1, size, hashes, root)


def owner(api, sql: str) -> None:
    api.session.execute(text("ALTER TABLE audit_events DISABLE TRIGGER USER"))
    api.session.execute(text(sql))
    api.session.execute(text("ALTER TABLE audit_events ENABLE TRIGGER USER"))
    api.session.expire_all()


@pytest.mark.parametrize(
    "edit",
    [
        "details = jsonb_set(details, '{purpose}', '\"a routine check\"')",  # why
        "details = jsonb_set(details, '{items}', '[\"cappun\"]')",  # what was asked
        "created_at = created_at - interval '3 days'",  # when
        "tier = 'open', action = 'population.answer'",  # who, and what came of it
    ],
)
def test_an_owner_edit_of_what_the_participant_reads_breaks_their_proof(api, edit):
    admin = api.token("operator", "admin")
    participant = store_interview(api.session, interview(), api.bank.keys)
    record(api.session, OPERATOR, "operator.answer", "operator", participant_id=participant.id,
           details={"purpose": "checking a complaint", "kind": "survey", "instrument": "gss",
                    "items": ["cappun", "gunlaw"], "questions": ["never shown"]})  # fmt: skip
    api.session.flush()
    assert api.client.post("/v1/admin/audit/checkpoints", headers=admin).status_code == 201
    head = signed_head(api)
    assert checked_in_browser(api, participant, "operator.answer", head.size, head.root)

    # The owner changes what the use says and leaves its chain hash (the receipt) as it was.
    owner(api, f"UPDATE audit_events SET {edit} WHERE action = 'operator.answer'")
    action = "population.answer" if "population" in edit else "operator.answer"
    assert not checked_in_browser(api, participant, action, head.size, head.root)


def test_the_proof_names_its_leaf_and_carries_no_content(api):
    admin = api.token("operator", "admin")
    participant = store_interview(api.session, interview(), api.bank.keys)
    record(api.session, OPERATOR, "operator.answer", "operator", participant_id=participant.id,
           details={"purpose": "checking a complaint"})  # fmt: skip
    api.session.flush()
    assert api.client.post("/v1/admin/audit/checkpoints", headers=admin).status_code == 201
    proof = api.client.get("/v1/audit/proof/1").json()  # public: hashes and the leaf's version only
    assert proof["leaf_version"] == 2 and set(proof) == {"seq", "leaf_index", "tree_size", "leaf_version", "hashes"}
    assert "complaint" not in json.dumps(proof)


NODE_SCRIPT = """
const fs = require("fs"), vm = require("vm");
const context = vm.createContext({ TextEncoder, atob, crypto: globalThis.crypto });
vm.runInContext(fs.readFileSync(process.argv[1], "utf8") + "\\nglobalThis.PROOFS = PROOFS;", context);
const uses = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(uses.map((use) => context.PROOFS.useEntry(use))));
"""


@pytest.mark.slow  # runs the page's own script in Node
def test_the_page_builds_the_entry_the_bank_hashes_byte_for_byte(api):
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node is not installed (apt-get install nodejs)")
    participant = store_interview(api.session, interview(), api.bank.keys)
    for details in (
        {"purpose": 'naïve "quoted" ✓ 𝄞\n', "kind": "survey", "items": ["cappun", "é"], "instrument": "gss"},
        {"experiment": "anchoring@1", "arms": [{"z": 1.0, "a": [True, None, 2.5, 1e-7, 1e21]}], "blinding": "x"},
        {"kind": "open", "questions": ["Where did you grow up?"], "released": True},
        {},
    ):
        record(api.session, OPERATOR, "operator.answer", "operator", participant_id=participant.id, details=details)
    sequence(api.session)
    uses = api.client.get("/v1/participant/audit", headers=api.participant_headers(participant)).json()
    uses = [u for u in uses if u["receipt"]["seq"] is not None]
    built = subprocess.run([node, "-e", NODE_SCRIPT, str(PROOFS_JS)], input=json.dumps(uses), capture_output=True,
                           text=True, check=True)  # fmt: skip
    for use, entry in zip(uses, json.loads(built.stdout), strict=True):
        event = api.session.scalars(select(AuditEvent).where(AuditEvent.seq == use["receipt"]["seq"])).one()
        assert entry == entries.canonical(entries.view(event)), use
        assert hashlib.sha256(entry.encode()).digest() == entries.entry(event)
