"""Merkle proofs over HTTP: anyone holding an event (its receipt, and the use as a participant's page
shows it) proves it against the signed tree head the bank published, and two heads against each other,
with the hashes the API serves and nothing else."""

from __future__ import annotations

import base64

from sqlalchemy import select, text

from agentbank.audit import notes
from agentbank.audit.entries import leaf
from agentbank.audit.log import Actor, record
from agentbank.audit.merkle import verify_consistency, verify_inclusion
from agentbank.db.models import AuditEvent

TEAM = Actor("client", "team-a")


def head(api) -> tuple[notes.TreeHead, notes.Note]:
    """The newest checkpoint's tree head, its note signature checked with the published verifier key."""
    served = api.client.get("/v1/audit/checkpoint").json()
    note = notes.Note.parse(served["note"])
    key = notes.Verifier.parse(api.client.get("/v1/audit/public-key").json()["note_key"])
    assert note.signed_by(key)
    return notes.TreeHead.parse(note.text), note


def receipts(api) -> dict[int, bytes]:
    """Each placed event's leaf hash (what its receipt and the use it records are proven by)."""
    rows = api.session.scalars(select(AuditEvent).where(AuditEvent.seq.is_not(None)))
    return {event.seq: leaf(event) for event in rows}


def test_a_receipt_proves_against_the_published_head_and_heads_against_each_other(api):
    admin = api.token("operator", "admin")
    for i in range(9):
        record(api.session, TEAM, "aggregate.read", "open", details={"n": i})
    api.session.flush()
    assert api.client.post("/v1/admin/audit/checkpoints", headers=admin).status_code == 201
    first, _ = head(api)
    for i in range(20):
        record(api.session, TEAM, "aggregate.read", "open", details={"n": i})
    api.session.flush()
    assert api.client.post("/v1/admin/audit/checkpoints", headers=admin).status_code == 201
    second, _ = head(api)
    assert second.size > first.size > 9

    chain = receipts(api)
    for seq in (1, first.size, second.size):
        served = api.client.get(f"/v1/audit/proof/{seq}", params={"tree_size": second.size})  # no token: public
        assert served.status_code == 200, served.text
        body = served.json()
        proof = [base64.b64decode(h) for h in body["hashes"]]
        assert body["leaf_index"] == seq - 1 and body["tree_size"] == second.size and body["leaf_version"] == 2
        assert verify_inclusion(chain[seq], seq - 1, second.size, proof, second.root)
        assert not verify_inclusion(chain[seq][::-1], seq - 1, second.size, proof, second.root)
    # Without a size, against the newest head.
    assert api.client.get("/v1/audit/proof/2").json()["tree_size"] == second.size

    consistency = api.client.get("/v1/audit/consistency", params={"first": first.size, "second": second.size})
    proof = [base64.b64decode(h) for h in consistency.json()["hashes"]]
    assert verify_consistency(first.size, second.size, first.root, second.root, proof)


def test_what_cannot_be_proven_is_refused_plainly(api):
    assert api.client.get("/v1/audit/proof/1").status_code == 404  # no head yet
    admin = api.token("operator", "admin")
    assert api.client.post("/v1/admin/audit/checkpoints", headers=admin).status_code == 201
    size = head(api)[0].size
    beyond = api.client.get(f"/v1/audit/proof/{size + 1}", params={"tree_size": size})
    assert beyond.status_code == 422 and "not in a tree" in beyond.json()["error"]["message"]
    future = api.client.get("/v1/audit/proof/1", params={"tree_size": 10**6})
    assert future.status_code == 404 and "chained events" in future.json()["error"]["message"]
    for bad in ("0", "-1", str(2**63), "x"):
        assert api.client.get(f"/v1/audit/proof/{bad}").status_code == 422
    assert api.client.get("/v1/audit/consistency", params={"first": 3, "second": 2}).status_code == 422


def test_a_served_proof_through_an_edited_node_no_longer_proves(api):
    """What a participant's page would see if someone rewrote the stored tree: the proof fails, loudly."""
    admin = api.token("operator", "admin")
    for i in range(300):
        record(api.session, TEAM, "aggregate.read", "open", details={"n": i})
    api.session.flush()
    assert api.client.post("/v1/admin/audit/checkpoints", headers=admin).status_code == 201
    tree_head, _ = head(api)
    chain = receipts(api)
    api.session.execute(text("ALTER TABLE audit_tree_nodes DISABLE TRIGGER USER"))
    api.session.execute(text("UPDATE audit_tree_nodes SET hash = :h WHERE level = 8"), {"h": bytes(32)})
    api.session.execute(text("ALTER TABLE audit_tree_nodes ENABLE TRIGGER USER"))
    body = api.client.get(f"/v1/audit/proof/{tree_head.size}", params={"tree_size": tree_head.size}).json()
    proof = [base64.b64decode(h) for h in body["hashes"]]
    assert not verify_inclusion(chain[tree_head.size], tree_head.size - 1, tree_head.size, proof,
                                tree_head.root)  # fmt: skip
