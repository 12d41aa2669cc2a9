"""The deploy files a platform team applies: valid against Kubernetes' own schemas (offline), and saying
only what the code accepts (commands, options, settings, routes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from typer.testing import CliRunner

from agentbank.core.settings import Settings
from app.api import create_app
from app.cli import cli

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
MANIFESTS = sorted((DEPLOY / "k8s").glob("*.yaml"))
KUBERNETES = "1.30.0"


def documents() -> list[dict[str, Any]]:
    return [doc for path in MANIFESTS for doc in yaml.safe_load_all(path.read_text()) if doc]


def containers() -> list[dict[str, Any]]:
    found = []
    for doc in documents():
        spec = doc.get("spec", {}).get("template", {}).get("spec", {})
        found += spec.get("containers", [])
    return found


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_every_manifest_is_valid_kubernetes(path):
    for doc in yaml.safe_load_all(path.read_text()):
        kubernetes_validate.validate(doc, KUBERNETES, strict=True)  # raises on any schema error


def test_the_manifests_hold_what_a_platform_team_expects():
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in documents())
    assert kinds == [
        ("ConfigMap", "agentbank-config"), ("Deployment", "agentbank-api"), ("Deployment", "agentbank-worker"),
        ("Job", "agentbank-migrate"), ("PersistentVolumeClaim", "agentbank-keyring"),
        ("Secret", "agentbank-secrets"), ("Service", "agentbank-api"),
    ]  # fmt: skip
    for container in containers():
        assert container["resources"]["requests"]["cpu"] and container["resources"]["requests"]["memory"]
    api = next(c for c in containers() if c["name"] == "api")
    assert api["readinessProbe"]["httpGet"]["path"] == "/v1/ready"
    assert api["livenessProbe"]["httpGet"]["path"] == "/v1/health"


def commands() -> list[list[str]]:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return [c["args"] for c in containers()] + [s["command"] for s in compose["services"].values() if "command" in s]


@pytest.mark.parametrize("args", commands(), ids=" ".join)
def test_every_command_they_run_is_one_the_bank_accepts(args):
    result = CliRunner().invoke(cli, [*args, "--help"])
    assert result.exit_code == 0, result.output


def test_every_setting_they_set_exists_and_every_path_they_probe_is_served(tmp_path):
    fields = {f"AGENTBANK_{name.upper()}" for name in Settings.model_fields}
    config = next(d for d in documents() if d["kind"] == "ConfigMap")["data"]
    secret = next(d for d in documents() if d["kind"] == "Secret")["stringData"]
    example = [line.split("=")[0].lstrip("# ") for line in (DEPLOY / "production.env.example").read_text().splitlines()
               if "=" in line and line.lstrip("# ").startswith("AGENTBANK_")]  # fmt: skip
    assert set(config) | set(secret) | set(example) <= fields
    paths = set(create_app(Settings(data_dir=tmp_path)).openapi()["paths"])
    assert {"/v1/ready", "/v1/health"} <= paths
