"""The checkpoint key: never derivable from a placeholder secret, stable across restarts, named in every checkpoint."""

import stat

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from agentbank.audit.signing_keys import AuditSigner, default_key_path, load_signer
from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings

REAL_SECRET = "a-real-secret-that-is-long-enough-for-production"


def test_a_placeholder_secret_gets_a_random_key_kept_in_a_private_file(tmp_path):
    settings = Settings(data_dir=tmp_path, secret_key="change-me")
    signer = load_signer(settings)
    # Anyone can derive the key of the default secret; it must not be the one that signs.
    assert signer.key_id != AuditSigner.from_secret("change-me").key_id
    path = default_key_path(settings)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_signer(settings).key_id == signer.key_id  # kept, not made again on each start
    assert load_signer(Settings(data_dir=tmp_path / "other", secret_key="change-me")).key_id != signer.key_id


def test_a_real_secret_derives_the_key_unless_a_key_file_already_signs(tmp_path):
    derived = load_signer(Settings(data_dir=tmp_path, secret_key=REAL_SECRET, environment="production"))
    assert derived.key_id == AuditSigner.from_secret(REAL_SECRET).key_id
    earlier = load_signer(Settings(data_dir=tmp_path / "dev", secret_key="change-me"))
    later = load_signer(Settings(data_dir=tmp_path / "dev", secret_key=REAL_SECRET))
    assert later.key_id == earlier.key_id  # checkpoints signed before the secret was set stay valid


def test_a_configured_key_file_must_exist_outside_development(tmp_path):
    missing = tmp_path / "keys" / "audit.pem"
    with pytest.raises(ConfigurationError, match="names no file"):
        load_signer(Settings(secret_key=REAL_SECRET, environment="production", audit_signing_key_file=missing))
    made = load_signer(Settings(data_dir=tmp_path, audit_signing_key_file=missing))  # development makes one
    production = Settings(secret_key=REAL_SECRET, environment="production", audit_signing_key_file=missing)
    assert load_signer(production).key_id == made.key_id != AuditSigner.from_secret(REAL_SECRET).key_id


def test_a_key_file_that_is_not_ed25519_is_refused(tmp_path):
    other = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path = tmp_path / "k.pem"
    path.write_bytes(other)
    with pytest.raises(ConfigurationError, match="not Ed25519"):
        load_signer(Settings(data_dir=tmp_path, audit_signing_key_file=path))
