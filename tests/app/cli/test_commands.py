"""The command line as a person uses it: real processes, the embedded database, fake models."""

import subprocess
import sys

import pytest

from migrations.runner import head_revision
from tests.support.command_line import agentbank

pytestmark = pytest.mark.cli


def test_doctor_reports_each_component_and_the_schema_state():
    before = agentbank("doctor")
    assert before.returncode == 0, before.stderr
    assert "pgvector      0.8" in before.stdout and "found the nearest" in before.stdout
    assert "run `agentbank db upgrade`" in before.stdout
    assert "chat model" in before.stdout and "embedder" in before.stdout
    assert "speech" in before.stdout and "words heard back" in before.stdout
    assert "smart-turn" in before.stdout and "that the question has finished" in before.stdout

    assert agentbank("db", "upgrade").returncode == 0
    after = agentbank("doctor", "--skip-models")
    assert after.returncode == 0
    head = head_revision()
    assert f"at {head}" in after.stdout and "db upgrade" not in after.stdout
    assert f"at {head}" in agentbank("db", "current").stdout


def test_alembic_itself_migrates_a_fresh_data_directory_as_the_owner():
    """The bare `alembic` command line (as CI and operators run it) needs no role to exist yet."""
    fresh = agentbank("db", "current")
    assert fresh.returncode == 0, fresh.stderr
    assert "at nothing" in fresh.stdout

    upgraded = subprocess.run(
        [sys.executable, "-m", "alembic", "upgrade", "head"], capture_output=True, text=True, timeout=300
    )
    assert upgraded.returncode == 0, upgraded.stderr
    assert f"at {head_revision()}" in agentbank("db", "current").stdout


def test_evaluate_runs_on_a_fresh_data_directory():
    """The evaluation's own database is made next to a bank that was never migrated; its role logs in."""
    result = agentbank(
        "evaluate", "--dataset", "gss-panel06", "--conditions", "survey,interview-survey,population-mode,combined",
        "--sample", "3", "--items", "2", "--no-reasons",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "survey" in result.stdout and "population-mode" in result.stdout
    # The distortions and the fidelity of aggregates (weighted by the panel's weights), in tables and sentences.
    assert "distortions" in result.stdout and "fidelity of aggregates (mean over items, weighted)" in result.stdout
    assert "- The combination served" in result.stdout and "interview-survey" in result.stdout


def test_evaluate_several_models_on_one_plan_and_a_bad_model_name(tmp_path):
    """`--models` runs the same plan once per model and puts them side by side with the tokens each used."""
    result = agentbank(
        "evaluate", "--dataset", "gss-panel06", "--conditions", "survey,population-mode", "--sample", "3",
        "--items", "2", "--no-reasons", "--models", "fake,fake", "--out", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "models compared on the same people and items" in result.stdout
    (page,) = tmp_path.glob("models-*.html")
    assert "tokens (prompt + completion)" in page.read_text()
    wrong = agentbank("evaluate", "--dataset", "gss-panel06", "--models", "telepathy")
    assert wrong.returncode == 2 and "names no model" in wrong.stderr and "Traceback" not in wrong.stderr


def test_a_fresh_bank_has_nothing_to_score_and_says_so():
    result = agentbank("evaluate", "--dataset", "bank", "--conditions", "population-mode")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "0 participants with both surveys complete" in result.stderr and "retest" in result.stderr
    standing = agentbank("validity")
    assert standing.returncode == 0, standing.stderr
    assert "participants (consenting): 0" in standing.stdout
    assert "no scoring of the bank's agents yet" in standing.stdout


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://nobody@127.0.0.1:1/bank", "check AGENTBANK_DATABASE_URL"),
        ("mysql://u@127.0.0.1/bank", "needs PostgreSQL"),
        ("not a url", "not a database URL"),
    ],
)
def test_doctor_explains_a_bad_database_url(url, message):
    result = agentbank("doctor", "--skip-models", AGENTBANK_DATABASE_URL=url)
    assert result.returncode == 1
    assert message in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_missing_model_file_fails_with_a_hint(tmp_path):
    result = agentbank(
        "doctor",
        AGENTBANK_CHAT_PROVIDER="embedded",
        AGENTBANK_EMBEDDED_MODEL_PATH=str(tmp_path / "missing.gguf"),
    )
    assert result.returncode == 1
    assert "no model file" in result.stdout and "AGENTBANK_EMBEDDED_MODEL_PATH" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_invalid_settings_are_listed_not_raised():
    result = agentbank("db", "current", AGENTBANK_CHAT_PROVIDER="bogus")
    assert result.returncode == 2
    assert "invalid setting chat_provider" in result.stderr
    assert "Traceback" not in result.stderr
