"""``agentbank backup`` and ``restore`` on the embedded server: the bank's own database replaced whole."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.command_line import agentbank


@pytest.mark.slow  # a dozen processes, each starting on the embedded server
def test_backup_and_restore_on_the_embedded_server(tmp_path):
    assert agentbank("db", "upgrade").returncode == 0
    assert agentbank("clients", "create", "kept team", "--scope", "aggregate:read").returncode == 0
    assert agentbank("audit", "checkpoint").returncode == 0
    backed = agentbank("backup", str(tmp_path / "backup"))
    assert backed.returncode == 0, backed.stderr
    assert "no key" in backed.stdout
    manifest = json.loads((tmp_path / "backup" / "manifest.json").read_text())
    assert set(manifest["files"]) == {"database.dump", "audit-heads/checkpoints.jsonl"}
    again = agentbank("backup", str(tmp_path / "backup"))
    assert again.returncode == 1 and "is not empty" in again.stderr

    assert agentbank("clients", "create", "later team", "--scope", "aggregate:read").returncode == 0
    refused = subprocess.run(
        [sys.executable, "-c", "from app.cli import main; main()", "restore", str(tmp_path / "backup")],
        input="n\n", capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert refused.returncode == 1 and "later team" in agentbank("clients", "list").stdout
    restored = agentbank("restore", str(tmp_path / "backup"), "--yes")
    assert restored.returncode == 0, restored.stderr
    assert "0 withdrawal(s) since it re-applied" in " ".join(restored.stdout.split())
    listed = agentbank("clients", "list").stdout
    assert "kept team" in listed and "later team" not in listed
    # The outside checkpoints were never touched, and the keyring never left the data directory.
    outside = Path(os.environ["AGENTBANK_DATA_DIR"]) / "audit-checkpoints" / "checkpoints.jsonl"
    assert outside.read_text() == (tmp_path / "backup" / "audit-heads" / "checkpoints.jsonl").read_text()
    # The data directory lost: a new one, with the keyring, the signing key and the outside record kept apart.
    old = Path(os.environ["AGENTBANK_DATA_DIR"])
    elsewhere = {
        "AGENTBANK_DATA_DIR": str(tmp_path / "new-data"), "AGENTBANK_KEYRING_DIR": str(old / "keyring"),
        "AGENTBANK_AUDIT_CHECKPOINT_DIR": str(old / "audit-checkpoints"),
        "AGENTBANK_AUDIT_SIGNING_KEY_FILE": str(old / "audit-signing-key.pem"),
    }  # fmt: skip
    recovered = agentbank("restore", str(tmp_path / "backup"), "--yes", **elsewhere)
    assert recovered.returncode == 0, recovered.stderr
    listed = agentbank("clients", "list", **elsewhere).stdout
    assert "kept team" in listed and "later team" not in listed
