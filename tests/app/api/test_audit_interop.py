"""The audit log's published heads, proofs and tiles, verified by an implementation the bank did not write: the Go
project's signed notes and transparency-log proofs (``golang.org/x/mod/sumdb/note`` and ``sumdb/tlog``, from
Debian's ``golang-golang-x-mod-dev``), built offline with Debian's Go. What the bank serves is what any tlog
tool checks, and a proof of the wrong leaf fails there too."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentbank.audit import outside, tree
from agentbank.audit.log import Actor, record
from agentbank.audit.tiles import TileLog

pytestmark = pytest.mark.slow  # builds and runs a Go program
GOPATH = Path("/usr/share/gocode")  # where Debian puts Go sources; ``golang.org/x/mod`` among them
PROGRAM = Path(__file__).parents[2] / "agentbank" / "interop" / "verify_log.go"
TEAM = Actor("client", "team-a")


@pytest.fixture(scope="module")
def verifier(tmp_path_factory) -> Path:
    if shutil.which("go") is None or not (GOPATH / "src/golang.org/x/mod/sumdb/tlog").is_dir():
        pytest.skip("Go and golang.org/x/mod are not installed (apt-get install golang-go golang-golang-x-mod-dev)")
    out = tmp_path_factory.mktemp("go") / "verify_log"
    env = {**os.environ, "GO111MODULE": "off", "GOPATH": str(GOPATH), "GOCACHE": str(out.parent / "cache"),
           "GOFLAGS": "", "CGO_ENABLED": "0"}  # fmt: skip
    built = subprocess.run(["go", "build", "-o", str(out), str(PROGRAM)], env=env, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return out


def edited_tiles(tiles: TileLog, where: Path) -> Path:
    """A copy of the tiles with one byte of the first leaf's hash changed."""
    shutil.copytree(tiles.folder, where)
    first = where / "tile" / "0" / "000"
    data = bytearray(first.read_bytes())
    data[0] ^= 1
    first.write_bytes(bytes(data))
    return where


def checkpoint_note(api, admin, events: int) -> str:
    for i in range(events):
        record(api.session, TEAM, "aggregate.read", "open", details={"n": i})
    api.session.flush()
    assert api.client.post("/v1/admin/audit/checkpoints", headers=admin).status_code == 201
    return api.client.get("/v1/audit/checkpoint").json()["note"]


def test_go_verifies_the_banks_notes_proofs_and_tiles(api, verifier, tmp_path):
    admin = api.token("operator", "admin")
    older = checkpoint_note(api, admin, 9)
    newer = checkpoint_note(api, admin, 300)  # past one stored subtree of 256 leaves
    old_size, new_size = (int(note.splitlines()[1]) for note in (older, newer))
    tiles = TileLog(tmp_path / "tiles")
    outside.publish(api.session, tiles)
    assert tiles.size() >= new_size
    seq = 5
    inclusion = api.client.get(f"/v1/audit/proof/{seq}", params={"tree_size": new_size}).json()
    consistency = api.client.get("/v1/audit/consistency", params={"first": old_size, "second": new_size}).json()
    given = {
        "vkey": api.client.get("/v1/audit/public-key").json()["note_key"],
        "old_note": older, "new_note": newer, "index": inclusion["leaf_index"],
        "leaf_hash": base64.b64encode(tree.leaves(api.session, seq - 1, seq)[0]).decode(),
        "inclusion": inclusion["hashes"], "consistency": consistency["hashes"], "tiles": str(tiles.folder),
    }  # fmt: skip

    checked = subprocess.run([verifier], input=json.dumps(given), capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert f"leaf {seq - 1} included in the tree of {new_size}" in checked.stdout
    assert f"tree of {old_size} consistent with the tree of {new_size}" in checked.stdout
    assert f"tiles of {new_size} leaves verified" in checked.stdout

    # The same checks fail there for another leaf, an edited note and a proof from another tree.
    wrong = [
        {**given, "leaf_hash": base64.b64encode(tree.leaves(api.session, seq, seq + 1)[0]).decode()},
        {**given, "new_note": newer.replace(f"\n{new_size}\n", f"\n{new_size + 1}\n")},
        {**given, "consistency": given["inclusion"]},
        {**given, "tiles": str(edited_tiles(tiles, tmp_path / "edited"))},
    ]
    for case in wrong:
        refused = subprocess.run([verifier], input=json.dumps(case), capture_output=True, text=True)
        assert refused.returncode == 1 and "not verified" in refused.stderr, refused.stdout
