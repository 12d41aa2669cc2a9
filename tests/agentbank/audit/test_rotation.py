"""Rotating the checkpoint key: a new key id, and the old checkpoints still verify with the published old key."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy.orm import sessionmaker

from agentbank.audit.checkpoints import CheckpointFile, SignedCheckpoint, checkpoint_message, publish_checkpoint
from agentbank.audit.log import SYSTEM, Actor, record
from agentbank.audit.signing_keys import AuditSigner, load_signer
from agentbank.audit.trust import ROTATION_GRACE, TrustedKeys, read_retired, retired_keys_path, rotate_signing_key
from agentbank.audit.verification import verify_log
from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings

RESEARCHER = Actor("client", "team-a")


@pytest.fixture
def bank(db, tmp_path):
    """Settings with a key file (the development key), and sessions inside the test's transaction."""
    settings = Settings(data_dir=tmp_path, secret_key="change-me")
    return settings, sessionmaker(bind=db.connection(), join_transaction_mode="create_savepoint")


def write(db, n: int) -> None:
    for i in range(n):
        record(db, RESEARCHER, "aggregate.read", "open", details={"n": i})
    db.flush()


def kinds(db, keys, settings) -> set[tuple[str, int | None]]:
    db.expire_all()
    outside = CheckpointFile.of(settings).read()[0]
    return {(f.kind, f.seq) for f in verify_log(db, keys, outside).findings}


def test_after_a_rotation_old_and_new_checkpoints_verify(db, bank):
    settings, sessions = bank
    old = load_signer(settings)
    write(db, 3)
    publish_checkpoint(sessions, old, CheckpointFile.of(settings))
    write(db, 2)

    retired_id, new_id = rotate_signing_key(settings, sessions, SYSTEM)
    assert retired_id == old.key_id != new_id == load_signer(settings).key_id
    write(db, 2)
    publish_checkpoint(sessions, load_signer(settings), CheckpointFile.of(settings))

    outside = CheckpointFile.of(settings).read()[0]
    assert [p.key_id for p in outside] == [old.key_id, old.key_id, new_id, new_id]  # both sign the boundary
    keys = TrustedKeys.of(settings)
    assert [r.key_id for r in keys.retired] == [old.key_id] and keys.retired[0].successor == new_id
    assert kinds(db, keys, settings) == set()
    # With only the new key, what the old one signed cannot be told from a forgery: that is why it is published.
    assert {k for k, _ in kinds(db, load_signer(settings).public_key, settings)} == {"bad_signature"}
    # The old private key is gone from the key file.
    assert load_signer(settings).key_id != old.key_id


def test_the_retired_key_is_published_with_a_handover_anyone_can_check(api, tmp_path):
    settings = api.bank.settings.model_copy(update={"audit_signing_key_file": tmp_path / "signing.pem"})
    api.bank.settings = settings
    sessions = sessionmaker(bind=api.session.connection(), join_transaction_mode="create_savepoint")
    first = load_signer(settings)
    write(api.session, 1)
    old, new = rotate_signing_key(settings, sessions, SYSTEM)
    assert old == first.key_id
    published = api.client.get("/v1/audit/public-key").json()
    assert published["key_id"] == new
    [retired] = published["retired"]
    assert retired["key_id"] == old and retired["successor"] == new
    assert read_retired(settings)[0].handed_over()
    line = json.loads(retired_keys_path(settings).read_text())
    assert line["handover"] == retired["handover"]


def test_a_retired_key_signs_nothing_new_and_a_forged_handover_is_refused(db, bank):
    settings, sessions = bank
    old = load_signer(settings)
    write(db, 2)
    rotate_signing_key(settings, sessions, SYSTEM)
    keys = TrustedKeys.of(settings)
    retired_at = keys.retired[0].retired_at
    late = retired_at + ROTATION_GRACE + timedelta(seconds=1)
    # Someone who stole the old key signs a checkpoint after it retired.
    stolen = old.sign(checkpoint_message(2, b"x" * 32, late))
    assert not keys.verifies(SignedCheckpoint(2, b"x" * 32, late, old.key_id, stolen))
    assert keys.verifies(
        SignedCheckpoint(2, b"x" * 32, retired_at, old.key_id, old.sign(checkpoint_message(2, b"x" * 32, retired_at)))
    )

    # A retired-keys entry whose handover the key it names did not sign.
    path = retired_keys_path(settings)
    entry = json.loads(path.read_text())
    other = AuditSigner(Ed25519PrivateKey.generate())
    entry["handover"] = other.sign(b"anything").hex()
    path.write_text(json.dumps(entry) + "\n")
    with pytest.raises(ConfigurationError, match="handover is not signed"):
        TrustedKeys.of(settings)


def test_a_key_derived_from_the_secret_cannot_be_rotated_alone(db, tmp_path):
    settings = Settings(data_dir=tmp_path, secret_key="a-real-secret-of-more-than-32-characters!")
    sessions = sessionmaker(bind=db.connection(), join_transaction_mode="create_savepoint")
    with pytest.raises(ConfigurationError, match="derived from AGENTBANK_SECRET_KEY"):
        rotate_signing_key(settings, sessions, SYSTEM)
