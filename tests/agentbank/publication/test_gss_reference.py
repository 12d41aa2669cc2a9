"""The GSS reference counts the package ships: checked by their checksum, covering the whole GSS instrument,
enough for the fidelity figures without the larger reference data, and the same counts as that data holds."""

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from agentbank.instruments.gss import load_gss
from agentbank.instruments.model import Item, Option
from agentbank.publication.distributions import Cell, Distribution
from agentbank.publication.fidelity import (
    REFERENCE_FILE,
    SHIPPED_FILE,
    ReferenceDataError,
    canonical_sha256,
    counts_by_code,
    item_fidelity,
    read_reference,
    reference_counts,
    shipped_reference,
)

ROOT = Path(__file__).resolve().parents[3]
LARGER = ROOT.parent / "shared" / "data" / REFERENCE_FILE  # the optional codebook extract beside the checkout
needs_larger = pytest.mark.skipif(not LARGER.is_file(), reason="the shared reference data (../shared/data) is absent")


def shipped_path() -> Path:
    return Path(str(resources.files("agentbank.publication").joinpath(SHIPPED_FILE)))


def test_the_shipped_file_matches_its_checksum_and_says_where_it_comes_from():
    path = shipped_path()
    raw = json.loads(path.read_text(encoding="utf-8"))
    header = raw["header"]
    assert canonical_sha256(raw["counts"]) == header["sha256"]
    assert shipped_reference().counts == raw["counts"]  # the checked load reads the same
    assert path.stat().st_size < 100_000  # small enough to ship
    assert header["year"] == 2022
    assert "NORC at the University of Chicago" in header["source"] and "gssdataexplorer.norc.org" in header["source"]
    assert "cite" in header["licence"] and "public" in header["licence"]
    assert "scripts/extract_gss_reference.py" in header["extracted_by"]


def test_every_gss_item_with_options_has_counts_or_a_reason():
    shipped = shipped_reference()
    items = [item for item in load_gss().items if item.options]
    assert {item.key for item in items} == set(shipped.counts) | set(shipped.without_counts)
    assert not set(shipped.counts) & set(shipped.without_counts)
    for item in items:
        if item.key in shipped.counts:
            found = counts_by_code(shipped.counts[item.key], item)
            assert found and all(n >= 0 for n in found.values()), item.key
        else:
            assert shipped.without_counts[item.key].strip(), item.key
    assert len(shipped.counts) > 200  # the reference covers most of the instrument, not a handful


def test_reference_counts_need_no_reference_data(tmp_path):
    none = tmp_path / "none"
    gss = load_gss()
    cappun = reference_counts(none, gss.item("cappun"))
    assert cappun is not None and set(cappun) == {1, 2} and sum(cappun.values()) > 1000
    assert reference_counts(none, gss.item("wrkgovt")) is None  # not asked in 2022: the file says why
    # The open tier's figure, from the shipped counts alone: total variation of two answers is one difference.
    cells = [Cell(group={}, code=1, label="favor", count=60, share=0.6), Cell(group={}, code=2, label="oppose",
             count=40, share=0.4)]  # fmt: skip
    table = Distribution(release=1, instrument="gss", item="cappun", question="", breakdowns=[], k=5, total=100,
                         groups=[{"n": 100}], cells=cells, missing={}, weights=None, protection={})  # fmt: skip
    fidelity = item_fidelity(table, none)
    assert fidelity is not None and not fidelity["weighted"]
    assert fidelity["tvd"] == round(abs(0.6 - cappun[1] / sum(cappun.values())), 4)


@needs_larger
def test_the_shipped_counts_are_the_larger_sets(tmp_path):
    entries = {e["variable"]: e.get("counts_2022") or {} for e in json.loads(LARGER.read_text())}
    shipped = shipped_reference()
    for item in load_gss().items:
        assert reference_counts(tmp_path / "none", item) == counts_by_code(entries[item.key], item), item.key
        assert reference_counts(LARGER.parents[1], item) == reference_counts(tmp_path / "none", item), item.key
        if item.key in shipped.counts:
            assert shipped.counts[item.key] == entries[item.key], item.key  # the extract's figures, unchanged


@needs_larger
def test_the_script_rebuilds_the_shipped_file():
    done = subprocess.run([sys.executable, "scripts/extract_gss_reference.py", str(LARGER), "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert shipped_reference().header["sha256"] in done.stdout


def test_a_tampered_copy_fails_its_checksum(tmp_path):
    raw = json.loads(shipped_path().read_text(encoding="utf-8"))
    raw["counts"]["cappun"]["favor"] += 1
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ReferenceDataError, match="fail their checksum"):
        read_reference(tampered)
    raw["header"]["sha256"] = canonical_sha256(raw["counts"])  # made consistent again: accepted
    tampered.write_text(json.dumps(raw), encoding="utf-8")
    assert read_reference(tampered).counts["cappun"] == raw["counts"]["cappun"]
    broken = tmp_path / "broken.json"
    broken.write_text(shipped_path().read_text(encoding="utf-8")[:500], encoding="utf-8")
    with pytest.raises(ReferenceDataError, match="cannot be read"):
        read_reference(broken)


def test_only_items_the_file_does_not_name_are_looked_up_in_the_reference_data(tmp_path):
    reference = tmp_path / "reference"
    (reference / REFERENCE_FILE).parent.mkdir(parents=True)
    entries = [{"variable": "newitem", "counts_2022": {"Yes": 7, "no": 3, "iap": 90}},
               {"variable": "wrkgovt", "counts_2022": {"government": 5, "private": 5}}]  # fmt: skip
    (reference / REFERENCE_FILE).write_text(json.dumps(entries))
    new = Item(key="newitem", kind="categorical", question="?", options=(Option(1, "yes"), Option(2, "no")))
    assert reference_counts(reference, new) == {1: 7, 2: 3}
    assert reference_counts(tmp_path / "none", new) is None
    # The shipped file names wrkgovt as not asked in 2022: it has no counts, whatever the reference data say.
    assert reference_counts(reference, load_gss().item("wrkgovt")) is None
