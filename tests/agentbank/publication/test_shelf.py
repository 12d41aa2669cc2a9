"""The shelf of published releases: files by digest and by table, the current release, and older releases
removed with their files as their tables leave the database."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from agentbank.audit.signing_keys import load_signer
from agentbank.core.settings import Settings
from agentbank.instruments import load_instrument
from agentbank.publication.shelf import Shelf, current_on_shelf, point_current, publish
from agentbank.publication.workload import ask
from tests.app.api.factories import exact_release, population
from tests.support.factories import SECRET

REFERENCE = Path("../shared/data")


def _publish(db, shelf: Shelf, settings: Settings) -> int:
    release = exact_release(db)
    publish(db, release.id, shelf, load_signer(settings), lambda key: load_instrument(key, REFERENCE), REFERENCE)
    point_current(shelf, release.id)
    return release.id


def test_every_table_is_a_file_by_its_digest_and_by_its_name_under_the_current_release(db, tmp_path):
    settings = Settings(secret_key=SECRET, data_dir=tmp_path)
    shelf = Shelf(tmp_path / "releases")
    population(db, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(6)])
    ask(db, "gss", "cappun", ("sex", "race"))
    release = _publish(db, shelf, settings)
    assert current_on_shelf(shelf) == release and (shelf.root / "current").resolve() == shelf.root / str(release)
    manifest = json.loads(shelf.manifest(release).read_bytes())
    for key, entry in manifest["files"].items():
        by_table = shelf.root / "current" / "tables" / key.rsplit("/", 1)[0]
        named = by_table.with_name(f"{by_table.name}.{key.rsplit('/', 1)[1]}")
        assert hashlib.sha256(named.read_bytes()).hexdigest() == entry["sha256"], key  # what a file server maps
        assert named.samefile(shelf.file(entry["sha256"], key.rsplit("/", 1)[1]))
    assert (shelf.root / "current" / "tables" / "gss" / "cappun" / "sex.csv").is_file()
    assert (shelf.root / "current" / "tables" / "gss" / "cappun" / "-.json").is_file()  # the overall table
    pair = shelf.root / "current" / "tables" / "gss" / "cappun"
    assert (pair / "sex,race.csv").samefile(pair / "race,sex.csv")  # a pair under both its orders


def test_releases_before_the_previous_leave_the_shelf_with_their_files(db, tmp_path):
    settings = Settings(secret_key=SECRET, data_dir=tmp_path)
    shelf = Shelf(tmp_path / "releases")
    population(db, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(6)])
    first = _publish(db, shelf, settings)
    first_files = {p.name for p in shelf.files.iterdir()}
    population(db, [({"sex": 1}, 2)] * 5)  # the tables change
    second = _publish(db, shelf, settings)
    assert first_files <= {p.name for p in shelf.files.iterdir()}  # the previous release stays for its readers
    population(db, [({"sex": 2}, 1)] * 5)
    third = _publish(db, shelf, settings)
    kept = sorted(p.name for p in shelf.root.iterdir() if p.name.isdigit())
    assert kept == [str(second), str(third)] and str(first) not in kept
    named = set()
    for release in (second, third):
        manifest = json.loads(shelf.manifest(release).read_bytes())
        named |= {f"{e['sha256']}.{k.rsplit('/', 1)[1]}" for k, e in manifest["files"].items()}
    assert {p.name for p in shelf.files.iterdir()} == named  # no file of the first release alone is left
