"""The GSS panels ship with the package: a manifest with source, licence and checksums, checked on every load."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentbank.instruments.gss import load_gss
from evaluation.people import panel_files
from evaluation.people.panel_files import FOLDER, PANEL_FILES, PanelFileError, manifest, panel_path
from evaluation.people.waves import load_dataset

ROOT = Path(__file__).resolve().parents[3]
ORIGINALS = ROOT.parent / "shared" / "data" / "gss_panels"  # the optional reference data, where present


def test_the_manifest_names_source_licence_derivation_and_every_checksum():
    about = manifest()
    assert "NORC" in about["source"] and "identify a respondent" in about["licence"]
    assert about["derived_by"].startswith("python scripts/trim_gss_panels.py")
    assert (ROOT / "scripts" / "trim_gss_panels.py").is_file()
    files = about["files"]
    assert set(files) == set(PANEL_FILES.values())
    for dataset in PANEL_FILES:
        assert panel_path(dataset).stat().st_size == files[PANEL_FILES[dataset]]["bytes"]
    shipped = sum(p.stat().st_size for p in FOLDER.iterdir())
    assert shipped < 2_000_000, f"{shipped} bytes: a few MB at most"


@pytest.fixture
def copied(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "gss_panels"
    shutil.copytree(FOLDER, folder)
    monkeypatch.setattr(panel_files, "FOLDER", folder)
    monkeypatch.setattr(panel_files, "MANIFEST", folder / "MANIFEST.json")
    return folder


def test_a_corrupted_file_is_refused_with_the_fix(copied):
    assert load_dataset("gss-panel06", load_gss(), ["cappun"]).report.people == 2000
    path = copied / PANEL_FILES["gss-panel06"]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte flipped, the size unchanged
    path.write_bytes(bytes(data))
    with pytest.raises(PanelFileError) as caught:
        load_dataset("gss-panel06", load_gss(), ["cappun"])
    assert "gss-panel06 file is corrupted" in caught.value.message
    assert "git checkout -- evaluation/data/gss_panels" in caught.value.hint
    assert load_dataset("gss-panel08", load_gss(), ["cappun"]).report.people > 2000  # the other one is intact


def test_a_missing_file_or_manifest_is_named(copied):
    (copied / PANEL_FILES["gss-panel08"]).unlink()
    with pytest.raises(PanelFileError, match="gss-panel08 file is missing"):
        panel_path("gss-panel08")
    manifest_path = copied / "MANIFEST.json"
    about = json.loads(manifest_path.read_text())
    del about["files"][PANEL_FILES["gss-panel06"]]
    manifest_path.write_text(json.dumps(about))
    with pytest.raises(PanelFileError, match="no checksum"):
        panel_path("gss-panel06")
    manifest_path.write_text("{not json")
    with pytest.raises(PanelFileError, match="manifest"):
        panel_path("gss-panel06")


@pytest.mark.skipif(not ORIGINALS.is_dir(), reason="NORC's original panel files (optional reference data) are absent")
def test_the_shipped_files_are_the_originals_trimmed():
    """Rebuilt from the originals, the tables are the shipped ones; and each scores as the original does."""
    checked = subprocess.run([sys.executable, "scripts/trim_gss_panels.py", str(ORIGINALS), "--check"], cwd=ROOT,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "the same tables" in checked.stdout
    items = ["cappun", "polviews", "natenvir", "trust", "chldidel", "region"]
    for dataset, original in (("gss-panel06", "gss_panel06_long"), ("gss-panel08", "gss_panel08_long")):
        shipped = load_dataset(dataset, load_gss(), items)
        full = load_dataset(str(ORIGINALS / f"{original}.parquet"), load_gss(), items)
        assert shipped.responses == full.responses and shipped.demographics == full.demographics
        assert shipped.report.set_aside == full.report.set_aside and shipped.report.recodes == full.report.recodes
