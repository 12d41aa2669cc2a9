"""The Merkle tree's arithmetic against published test vectors, against tampering, and the note format.

The tree vectors are those of RFC 6962's reference implementation (Certificate Transparency), as the
transparency-dev/merkle library publishes them: eight leaves, the root at every size, four inclusion
and five consistency proofs. The note vector is the one the Go signed-note package documents (the
"PeterNeumann" key and note). The cosignature has no published vector with its text; its test builds
the bytes from the specification's definition (c2sp.org/tlog-cosignature) and checks each field.
"""

from __future__ import annotations

import base64
import hashlib
import struct

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from agentbank.audit import merkle, notes
from agentbank.audit.merkle import (
    CompactRange,
    MemoryTree,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    verify_consistency,
    verify_inclusion,
)

LEAVES = [bytes.fromhex(h) for h in ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                                     "606162636465666768696a6b6c6d6e6f"]]  # fmt: skip
ROOTS = [bytes.fromhex(h) for h in [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]]  # fmt: skip
H = {  # the proof hashes of the vectors, by their first bytes
    "96a2": "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
    "5f08": "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
    "6b47": "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    "bc1a": "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
    "ca85": "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
    "d37e": "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "fac5": "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "6e34": "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "0ebc": "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
    "b086": "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
}
INCLUSION = [(0, 8, ["96a2", "5f08", "6b47"]), (5, 8, ["bc1a", "ca85", "d37e"]), (2, 3, ["fac5"]),
             (1, 5, ["6e34", "5f08", "bc1a"])]  # fmt: skip
CONSISTENCY = [(1, 1, []), (1, 8, ["96a2", "5f08", "6b47"]), (6, 8, ["0ebc", "ca85", "d37e"]), (2, 5, ["5f08", "bc1a"]),
               (6, 7, ["0ebc", "b086", "d37e"])]  # fmt: skip


def hashes(names: list[str]) -> list[bytes]:
    return [bytes.fromhex(H[n]) for n in names]


TREE = MemoryTree(leaf_hash(leaf) for leaf in LEAVES)


def test_roots_of_the_published_vectors_at_every_size():
    assert merkle.EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    for size in range(1, 9):
        assert TREE.root(size) == ROOTS[size - 1]
        streamed = CompactRange()
        for leaf in LEAVES[:size]:
            streamed.append(leaf_hash(leaf))
        assert streamed.root() == ROOTS[size - 1]


@pytest.mark.parametrize(("index", "size", "path"), INCLUSION)
def test_inclusion_proofs_of_the_published_vectors(index, size, path):
    proof = inclusion_proof(TREE, index, size)
    assert proof == hashes(path)
    leaf, root = leaf_hash(LEAVES[index]), ROOTS[size - 1]
    assert verify_inclusion(leaf, index, size, proof, root)
    # The corruptions the reference library tries, each refused.
    flipped = [bytes([p[0] ^ 8]) + p[1:] for p in proof]
    wrong = [
        (leaf, index + 1, size, proof, root), (leaf, index ^ 2, size, proof, root),
        (leaf, index, size * 2, proof, root), (leaf, index, size // 2, proof, root),
        (b"WrongLeaf", index, size, proof, root),
        (leaf, index, size, proof, merkle.EMPTY_ROOT), (leaf, index, size, [*proof, b""], root),
        (leaf, index, size, [*proof, root], root), (leaf, index, size, [root, *proof], root),
        (leaf, index, size, proof[:-1], root),
        *[(leaf, index, size, [*proof[:i], flipped[i], *proof[i + 1:]], root) for i in range(len(proof))],
    ]  # fmt: skip
    if index > 0:
        wrong.append((leaf, index - 1, size, proof, root))
    for case in wrong:
        assert not verify_inclusion(*case), case


@pytest.mark.parametrize(("first", "second", "path"), CONSISTENCY)
def test_consistency_proofs_of_the_published_vectors(first, second, path):
    proof = consistency_proof(TREE, first, second)
    assert proof == hashes(path)
    root1, root2 = ROOTS[first - 1], ROOTS[second - 1]
    assert verify_consistency(first, second, root1, root2, proof)
    if not proof:
        return
    wrong = [
        (first - 1, second, root1, root2, proof), (first + 1, second, root1, root2, proof),
        (first, second * 2, root1, root2, proof), (first, second, root2, root1, proof),
        (first, second, b"WrongRoot", root2, proof), (first, second, root1, b"WrongRoot", proof),
        (first, second, root1, root2, []), (first, second, root1, root2, proof[:-1]),
        (first, second, root1, root2, [*proof, root1]), (first, second, root1, root2, [proof[0], *proof]),
        *[(first, second, root1, root2, [*proof[:i], bytes([p[0] ^ 16]) + p[1:], *proof[i + 1:]])
          for i, p in enumerate(proof)],
    ]  # fmt: skip
    for case in wrong:
        assert not verify_consistency(*case), case


def test_every_proof_of_every_small_tree_verifies_and_only_where_it_belongs():
    for size in range(1, 41):
        leaves = [leaf_hash(i.to_bytes(4, "big")) for i in range(size)]
        tree = MemoryTree(leaves)
        root = tree.root()
        for index in range(size):
            proof = inclusion_proof(tree, index, size)
            assert verify_inclusion(leaves[index], index, size, proof, root)
            assert not verify_inclusion(leaves[index], (index + 1) % size, size, proof, root) or size == 1
        for first in range(size + 1):
            proof = consistency_proof(tree, first, size)
            assert verify_consistency(first, size, tree.root(first), root, proof)
            if 0 < first < size:
                assert not verify_consistency(first, size, tree.root(first - 1) if first > 1 else b"x", root, proof)


# --- tampering: what a rewritten log does to a proof checked against a head signed before it -------------------

ENTRIES = [hashlib.sha256(f"event {i}".encode()).digest() for i in range(20)]  # chain hashes stand in
SIGNED = MemoryTree(leaf_hash(e) for e in ENTRIES).root()


def proven(entries: list[bytes], entry: bytes, index: int) -> bool:
    """Whether ``entry`` at ``index`` of a log now holding ``entries`` proves against the signed root."""
    tree = MemoryTree(leaf_hash(e) for e in entries)
    return verify_inclusion(leaf_hash(entry), index, len(entries), inclusion_proof(tree, index, len(entries)), SIGNED)


def test_an_edited_removed_or_reordered_event_fails_its_proof():
    assert all(proven(ENTRIES, e, i) for i, e in enumerate(ENTRIES))
    edited = [*ENTRIES]
    edited[7] = hashlib.sha256(b"event 7, edited").digest()
    assert not proven(edited, edited[7], 7)  # the edited entry does not prove
    assert not proven(edited, ENTRIES[3], 3)  # nor does any other, through a tree with the edit in it
    original_proof = inclusion_proof(MemoryTree(leaf_hash(e) for e in ENTRIES), 7, 20)
    assert not verify_inclusion(leaf_hash(edited[7]), 7, 20, original_proof, SIGNED)

    removed = ENTRIES[:7] + ENTRIES[8:]
    assert not proven(removed, ENTRIES[8], 7)  # every later event moved up one place
    assert not verify_inclusion(
        leaf_hash(ENTRIES[8]), 7, 20, inclusion_proof(MemoryTree(leaf_hash(e) for e in removed), 7, 19), SIGNED
    )

    reordered = [*ENTRIES]
    reordered[3], reordered[4] = reordered[4], reordered[3]
    assert not proven(reordered, reordered[3], 3)
    assert not proven(reordered, reordered[4], 4)


def test_a_rewritten_history_is_not_consistent_with_a_head_signed_before():
    earlier = MemoryTree(leaf_hash(e) for e in ENTRIES[:12])
    honest = MemoryTree(leaf_hash(e) for e in ENTRIES)
    assert verify_consistency(12, 20, earlier.root(), honest.root(), consistency_proof(honest, 12, 20))
    forked = [*ENTRIES]
    forked[5] = hashlib.sha256(b"another event 5").digest()
    fork = MemoryTree(leaf_hash(e) for e in forked)
    assert not verify_consistency(12, 20, earlier.root(), fork.root(), consistency_proof(fork, 12, 20))


def test_perfect_subtrees_and_ranges_match_the_whole_tree():
    leaves = [leaf_hash(i.to_bytes(2, "big")) for i in range(300)]
    tree, stream = MemoryTree(leaves), CompactRange()
    completed = {}
    for leaf in leaves:
        for level, index, digest in stream.append(leaf):
            completed[(level, index)] = digest
    assert stream.root() == tree.root()
    assert completed[(8, 0)] == tree.perfect(8, 0) == merkle.range_hash(tree, 0, 256)
    assert all(tree.perfect(level, index) == digest for (level, index), digest in completed.items())


# --- notes ---------------------------------------------------------------------------------------------------

PETER_SEED = base64.b64decode("AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz")[1:]
PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
PETER_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
PETER_NOTE = PETER_TEXT + (
    "\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
)


def test_a_note_signed_as_the_go_package_documents_byte_for_byte():
    key = Ed25519PrivateKey.from_private_bytes(PETER_SEED)
    assert notes.sign(PETER_TEXT, "PeterNeumann", key).render() == PETER_NOTE
    verifier = notes.Verifier.parse(PETER_VKEY)
    assert verifier.vkey() == PETER_VKEY
    assert notes.Note.parse(PETER_NOTE).signed_by(verifier)
    assert not notes.Note.parse(PETER_NOTE.replace("cryptography", "cryptology")).signed_by(verifier)
    with pytest.raises(notes.NoteError):
        notes.Verifier.parse(PETER_VKEY.replace("c74f20a3", "c74f20a4"))  # an ID that is not the key's
    # A published key whose base64 holds a "+" (transparency-dev/formats' tests): split on the first two only.
    assert notes.Verifier.parse("TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6").name == "TEST"


def test_a_checkpoint_and_its_cosignature_built_as_the_specifications_define():
    log_key, witness_key = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    head = notes.TreeHead("bank.example/audit", 20852163, ROOTS[7])
    text = head.text()
    assert text == f"bank.example/audit\n20852163\n{base64.b64encode(ROOTS[7]).decode()}\n"
    assert notes.TreeHead.parse(text) == head
    note = notes.sign(text, "bank.example/audit", log_key)
    line = notes.cosign(text, "witness.example/w1", witness_key, 1679315147)
    cosigned = notes.Note.parse(note.with_signatures(line).render())
    witness = notes.Verifier("witness.example/w1", notes.COSIGNATURE, witness_key.public_key())
    assert cosigned.cosigned_at(witness) == 1679315147
    assert cosigned.signed_by(notes.Verifier("bank.example/audit", notes.ED25519, log_key.public_key()))
    # The line's bytes, field by field: key ID over (name, newline, 0x04, key), the time big-endian, then
    # Ed25519 over "cosignature/v1", the time line and the checkpoint's text.
    raw = base64.b64decode(line.split(" ")[2])
    public = notes.raw_public(witness_key.public_key())
    assert raw[:4] == hashlib.sha256(b"witness.example/w1\n\x04" + public).digest()[:4]
    assert raw[4:12] == struct.pack(">Q", 1679315147)
    witness_key.public_key().verify(raw[12:], b"cosignature/v1\ntime 1679315147\n" + text.encode())
    # A cosignature is not a note signature, nor one over another head.
    assert not cosigned.signed_by(notes.Verifier("witness.example/w1", notes.ED25519, witness_key.public_key()))
    other = notes.TreeHead("bank.example/audit", 20852164, ROOTS[7]).text()
    assert notes.Note(other, cosigned.signatures).cosigned_at(witness) is None


@pytest.mark.parametrize(
    "text",
    ["bank\n12\n", "bank\n012\nAAAA\n", "bank\n12\nnot base64!\n", "bank\n12\nAAAA\n", "bank\n-1\n" + "A" * 43 + "=\n",
     "has space\n1\n" + base64.b64encode(bytes(32)).decode() + "\n"],
)  # fmt: skip
def test_what_is_not_a_checkpoint_is_refused(text):
    with pytest.raises(notes.NoteError):
        notes.TreeHead.parse(text)
