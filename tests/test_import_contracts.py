"""The import contracts (pyproject.toml) hold, cover every room of the domain, and catch a wrong import."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agentbank", "interviewer", "evaluation", "app", "migrations")


def contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def lint_imports(where: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"], cwd=where,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def rooms(package: str = "agentbank") -> set[str]:
    found = set()
    for entry in (ROOT / package).iterdir():
        if entry.name.startswith("_") or entry.name == "__pycache__":
            continue
        if (entry.is_dir() and (entry / "__init__.py").exists()) or entry.suffix == ".py":
            found.add(entry.stem)
    return found


def test_the_layers_name_every_area_of_the_domain_on_a_few_floors():
    layers = next(c for c in contracts() if c.get("containers") == ["agentbank"])
    named = {name.strip() for layer in layers["layers"] for name in layer.split("|")}
    assert named == rooms()
    # Areas of concern, not a tower: at most fifteen of them, on at most eight floors.
    assert len(rooms()) <= 15 and len(layers["layers"]) <= 8


def test_the_interviewer_and_the_evaluation_name_every_room_on_their_floors():
    for package in ("interviewer", "evaluation"):
        layers = next(c for c in contracts() if c.get("containers") == [package])
        named = {name.strip() for layer in layers["layers"] for name in layer.split("|")}
        assert named == rooms(package), package
        assert layers.get("exhaustive") is True


def test_the_doors_privacy_covers_every_area_but_the_consultation_and_its_other_rooms_too():
    door = next(c for c in contracts() if c["name"] == "Only the door runs the answering engine")
    sources = {s.removeprefix("agentbank.") for s in door["source_modules"] if s.startswith("agentbank.")}
    consultation = {"consultation.questions", "consultation.output_check"}  # beside the door, not through it
    assert sources == (rooms() - {"consultation"}) | consultation
    assert {"interviewer", "evaluation", "app", "agentbank_client"} <= set(door["source_modules"])


@pytest.mark.slow  # two full scans of the import graph
@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("agentbank/restricted/jobs/activity.py", "from agentbank.consultation.answering.engine import AnswerEngine",
         "Only the door runs the answering engine"),
        ("agentbank/keys/crypto.py", "from agentbank.runtime import worker",
         "The domain's areas, each on the floors below"),
        # Two contexts on one floor know nothing of each other.
        ("agentbank/publication/releases.py", "from agentbank.restricted.jobs import lifecycle",
         "The domain's areas, each on the floors below"),
        ("interviewer/session/script.py", "from interviewer.hearing import frames",
         "The interviewer's rooms, each on the floors below"),
        ("evaluation/runs/plan.py", "from evaluation.scoring import metrics",
         "The evaluation's rooms, each on the floors below"),
    ],
)  # fmt: skip
def test_a_wrong_import_breaks_its_contract(tmp_path, module, line, broken):
    assert lint_imports(ROOT).returncode == 0  # as the repository is
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in PACKAGES:
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    target = copy / module
    target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    result = lint_imports(copy)
    assert result.returncode != 0
    assert f"{broken} BROKEN" in result.stdout, result.stdout[-2000:]
