import pytest
from pydantic import ValidationError

from agentbank.core import settings as settings_module
from agentbank.core.settings import Settings

REAL_SECRET = "k" * 40


def test_reads_prefixed_environment(monkeypatch):
    monkeypatch.setenv("AGENTBANK_CHAT_PROVIDER", "openai")
    monkeypatch.setenv("AGENTBANK_CHAT_MODEL", "gpt-test")
    monkeypatch.setenv("AGENTBANK_EMBEDDED_THREADS", "3")
    s = Settings()
    assert (s.chat_provider, s.chat_model, s.embedded_threads) == ("openai", "gpt-test", 3)


def test_placeholder_secret_allowed_in_development():
    assert Settings(environment="development").secret_key.get_secret_value() == "change-me"


@pytest.mark.parametrize("value", ["change-me", "CHANGEME", "secret", ""])
def test_placeholder_secret_refused_outside_development(value):
    with pytest.raises(ValidationError, match="placeholder"):
        Settings(environment="production", secret_key=value)


def test_placeholder_api_key_refused_in_production():
    with pytest.raises(ValidationError, match="CHAT_API_KEY holds a placeholder"):
        Settings(
            environment="production",
            secret_key=REAL_SECRET,
            chat_provider="openai",
            chat_model="m",
            chat_api_key="changeme",
        )


def test_short_secret_refused_in_production():
    with pytest.raises(ValidationError, match="at least 32"):
        Settings(environment="production", secret_key="a-real-but-short-secret")


def test_real_secret_accepted_and_never_printed():
    s = Settings(environment="production", secret_key=REAL_SECRET, database_url="postgresql://u:pw@db/x")
    assert REAL_SECRET not in repr(s)
    assert "pw@db" not in repr(s)
    assert s.secret_key.get_secret_value() == REAL_SECRET


def test_openai_provider_needs_a_model():
    with pytest.raises(ValidationError, match="CHAT_MODEL"):
        Settings(chat_provider="openai")


def test_local_embedder_has_fixed_dimension():
    with pytest.raises(ValidationError, match="384"):
        Settings(embedder_provider="local", embedding_dimension=768)


def test_unknown_provider_refused():
    with pytest.raises(ValidationError):
        Settings(chat_provider="mystery")


def test_default_data_dir_is_outside_root_home(monkeypatch):
    monkeypatch.delenv("AGENTBANK_DATA_DIR")
    monkeypatch.setattr(settings_module.os, "geteuid", lambda: 0)
    assert Settings().data_dir.as_posix() == "/var/lib/agentbank"
    monkeypatch.setattr(settings_module.os, "geteuid", lambda: 1000)
    data_dir = Settings().data_dir
    assert data_dir.name == "agentbank" and data_dir.as_posix() != "/var/lib/agentbank"
    assert Settings().postgres_dir == data_dir / "postgres"
