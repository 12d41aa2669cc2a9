"""The witness's rules (c2sp.org/tlog-witness), one request at a time: what it cosigns, what it refuses
and with which status, and that its state only ever moves forward."""

from __future__ import annotations

import hashlib
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from agentbank.audit import notes
from agentbank.audit.merkle import MemoryTree, consistency_proof, leaf_hash
from agentbank.audit.witnesses.server import Refusal, Witness

ORIGIN = "bank.example/audit"
LOG_KEY = Ed25519PrivateKey.generate()
LOG = notes.Verifier(ORIGIN, notes.ED25519, LOG_KEY.public_key())


def tree(n: int, fork_at: int | None = None) -> MemoryTree:
    entries = [hashlib.sha256(f"{i}{'*' if i == fork_at else ''}".encode()).digest() for i in range(n)]
    return MemoryTree(leaf_hash(e) for e in entries)


def request(old: int, size: int, *, fork_at: int | None = None, key: Ed25519PrivateKey = LOG_KEY,
            origin: str = ORIGIN) -> str:  # fmt: skip
    t = tree(size, fork_at)
    proof = consistency_proof(t, old, size) if old else []
    note = notes.sign(notes.TreeHead(origin, size, t.root()).text(), origin, key).render()
    return f"old {old}\n" + "".join(f"{notes.b64(h)}\n" for h in proof) + "\n" + note


@pytest.fixture
def witness(tmp_path) -> Witness:
    return Witness("witness.example/w1", tmp_path / "w1", [LOG])


def refused(witness: Witness, body: str) -> Refusal:
    with pytest.raises(Refusal) as caught:
        witness.add_checkpoint(body)
    return caught.value


def test_cosigns_a_first_head_then_each_one_that_extends_it(witness):
    line = witness.add_checkpoint(request(0, 5), now=1700000000)
    text = notes.TreeHead(ORIGIN, 5, tree(5).root()).text()
    assert notes.Note.parse(text + "\n" + line).cosigned_at(witness.verifier) == 1700000000
    assert witness.held(ORIGIN) == 5
    witness.add_checkpoint(request(5, 12))
    witness.add_checkpoint(request(12, 12))  # the same head again: cosigned again, nothing moves
    assert witness.held(ORIGIN) == 12
    state = json.loads((witness.directory / "state.json").read_text())
    assert state == {ORIGIN: {"size": 12, "root": notes.b64(tree(12).root())}}
    assert not list(witness.directory.glob(".state.*"))  # written aside, then renamed into place


def test_refuses_a_rollback_with_409_and_the_size_it_holds(witness):
    witness.add_checkpoint(request(0, 12))
    rolled = refused(witness, request(0, 7))  # a log restored from an older backup starts again from nothing
    assert (rolled.status, rolled.body, rolled.content_type) == (409, "12\n", "text/x.tlog.size")
    stale = refused(witness, request(5, 7))
    assert stale.status == 409 and stale.body == "12\n"
    assert witness.held(ORIGIN) == 12


def test_refuses_a_fork_at_its_size_with_409_and_beyond_it_for_a_proof_that_fails(witness):
    witness.add_checkpoint(request(0, 12))
    same = refused(witness, request(12, 12, fork_at=3))
    assert same.status == 409 and "forked" in same.message
    # A forked log that grew: its proof leads from its own tree of 12, not from the one cosigned.
    grown = refused(witness, request(12, 20, fork_at=3))
    assert grown.status == 422
    assert witness.held(ORIGIN) == 12
    witness.add_checkpoint(request(12, 20))  # the honest log goes on


def test_refuses_what_it_cannot_trust_or_read(witness):
    assert refused(witness, request(0, 5, origin="other.example/log")).status == 404
    assert refused(witness, request(0, 5, key=Ed25519PrivateKey.generate())).status == 403
    witness.add_checkpoint(request(0, 5))
    assert refused(witness, request(0, 5).replace("old 0", "old 9")).status == 400  # old beyond the head
    assert refused(witness, "old 05\n\n" + request(0, 5).split("\n\n", 1)[1]).status == 400
    assert refused(witness, "not a request").status == 400
    bad_proof = request(5, 9).replace("old 5\n", "old 5\nAAAA\n", 1)
    assert refused(witness, bad_proof).status == 422
    assert witness.held(ORIGIN) == 5


def test_its_key_is_its_own_and_kept(tmp_path):
    first = Witness("witness.example/w1", tmp_path / "w1", [LOG])
    again = Witness("witness.example/w1", tmp_path / "w1", [LOG])
    other = Witness("witness.example/w2", tmp_path / "w2", [LOG])
    assert first.verifier.vkey() == again.verifier.vkey() != other.verifier.vkey()
    assert oct((tmp_path / "w1" / "witness-key.pem").stat().st_mode & 0o777) == "0o600"
