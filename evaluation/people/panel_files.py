"""The GSS panel files the evaluation ships, each checked against its manifest before it is read.

``evaluation/data/gss_panels/`` holds the two GSS three-wave panels trimmed to the columns the evaluation
reads (a few hundred kilobytes each, rebuilt from NORC's public-use files by
``scripts/trim_gss_panels.py``), and ``MANIFEST.json`` with their source, licence, how they were made and
each file's sha256. They ship inside the package, so ``agentbank evaluate --dataset gss-panel06`` works from
the repository alone, installed or not. A file whose bytes are not the ones the manifest names is refused
with the fix, never scored: a run's figures are only as good as the file they came from.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from agentbank.core.errors import AgentBankError

FOLDER = Path(__file__).resolve().parents[1] / "data" / "gss_panels"
MANIFEST = FOLDER / "MANIFEST.json"
PANEL_FILES = {"gss-panel06": "gss_panel06.parquet", "gss-panel08": "gss_panel08.parquet"}
RESTORE = "restore it from the repository (git checkout -- evaluation/data/gss_panels), or rebuild it from NORC's " \
    "files with scripts/trim_gss_panels.py"  # fmt: skip


class PanelFileError(AgentBankError):
    """A shipped panel file that is missing, or whose bytes are not the ones its manifest names."""

    code = "invalid_dataset"
    status_code = 422


def manifest() -> dict[str, Any]:
    """The manifest of the shipped panels: source, licence, derivation, and per file its sha256."""
    try:
        return dict(json.loads(MANIFEST.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError) as exc:
        raise PanelFileError(f"the manifest of the shipped GSS panels cannot be read ({MANIFEST})",
                             hint=RESTORE) from exc  # fmt: skip


def panel_path(dataset: str) -> Path:
    """The shipped file of ``dataset`` (``gss-panel06``, ``gss-panel08``), once its sha256 matches the manifest."""
    name = PANEL_FILES[dataset]
    path = FOLDER / name
    expected = manifest().get("files", {}).get(name, {}).get("sha256")
    if not path.is_file():
        raise PanelFileError(f"the {dataset} file is missing from the package ({path})", hint=RESTORE)
    if expected is None:
        raise PanelFileError(f"the manifest names no checksum for {name}", hint=RESTORE)
    found = hashlib.sha256(path.read_bytes()).hexdigest()  # a millisecond: checked on every load
    if found != expected:
        raise PanelFileError(
            f"the {dataset} file is corrupted: its sha256 is {found[:12]}…, the manifest says {expected[:12]}…",
            hint=RESTORE,
        )
    return path
