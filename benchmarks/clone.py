"""A stand-in for a fresh clone of the repository, with nothing beside it: for the newcomer's benchmark and tests.

``copy_repository`` copies the files git tracks, or would track (new and not ignored), into a folder of
its own, so the copy holds what a clone of this working tree would, and its parent holds nothing else
(no ``shared/`` data folder). ``borrow_environment`` gives the copy this interpreter's installed packages
as its ``.venv``, marked installed, so that ``make run`` there serves at once and runs the copy's own code:
installing takes minutes, and it is the time after installing that is measured.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = "from app.cli import main; main()"


def copy_repository(folder: Path) -> Path:
    """The repository's files copied into ``folder/agentbank`` (``folder`` holds nothing else)."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode()  # fmt: skip
    clone = folder / "agentbank"
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted in the working tree stays listed until the deletion is committed
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    return clone


def borrow_environment(clone: Path) -> None:
    """A ``.venv`` in the copy that is this interpreter, marked installed; its ``agentbank`` runs the copy's code
    (``make run`` runs it from the copy's root, which comes first on the path)."""
    bin_dir = clone / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    (bin_dir / "agentbank").write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{CLI}" "$@"\n')
    (bin_dir / "agentbank").chmod(0o755)
    (clone / ".venv" / ".installed").touch()  # newer than the copy's pyproject.toml (copied with its time)
