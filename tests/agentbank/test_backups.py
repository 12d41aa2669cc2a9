"""Backups that keep withdrawals: a restore re-applies every withdrawal the ledger recorded after the backup."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, select, text

from agentbank.audit import log as audit
from agentbank.audit.checkpoints import CheckpointFile, publish_checkpoint
from agentbank.audit.signing_keys import load_signer
from agentbank.audit.trust import TrustedKeys
from agentbank.db.dumps import stage
from agentbank.db.engine import make_sessionmaker, transaction
from agentbank.db.inventory import INVENTORY, Kind
from agentbank.db.models import Agent, Participant, Transcript, Turn
from agentbank.errors import ConfigurationError
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import FileKeyStore
from agentbank.participants.backups import DUMP, back_up
from agentbank.participants.ledger import WithdrawalLedger, read_ledger
from agentbank.participants.restoring import restore
from agentbank.participants.withdrawal import withdraw
from agentbank.settings import Settings
from agentbank.statuses import ConsentStatus
from migrations.runner import alembic_config, upgrade
from tests.agentbank.factories import SECRET, build

OPERATOR = audit.Actor("operator", "test")


def migrate(url: str) -> None:
    upgrade(alembic_config(url))


def naming(engine: Engine, ids: list[uuid.UUID]) -> dict[str, int]:
    """Rows of every personal-data table (the inventory) whose pseudonymous columns name one of ``ids``;
    the audit log aside, which keeps ids by design."""
    found = {}
    with engine.connect() as conn:
        for table, columns in INVENTORY.items():
            if table == "audit_events":
                continue
            for column in (c for c, kind in columns.items() if kind == Kind.PSEUDONYMOUS):
                for needle in ids:
                    count = conn.execute(
                        text(f'SELECT count(*) FROM "{table}" WHERE CAST("{column}" AS text) LIKE :n'),
                        {"n": f"%{needle}%"},
                    ).scalar_one()
                    if count:
                        found[f"{table}.{column}={needle}"] = count
    return found


def readable(engine: Engine, keys: KeyRing, participant_id: uuid.UUID) -> str:
    """The participant's first turn and their agent's persona, opened with their data key as stored."""
    with make_sessionmaker(engine)() as session:
        participant = session.get_one(Participant, participant_id)
        cipher = keys.cipher(participant.id, participant.wrapped_key)
        turn = session.scalars(
            select(Turn.text_encrypted).join(Transcript, Transcript.id == Turn.transcript_id)
            .where(Transcript.participant_id == participant_id).order_by(Turn.position)
        ).first()  # fmt: skip
        persona = session.scalars(select(Agent.persona_encrypted).where(Agent.participant_id == participant_id)).one()
        assert turn is not None and persona is not None
        return cipher.open(turn) + " / " + cipher.open(persona)


def consent(engine: Engine, participant_id: uuid.UUID) -> str:
    with engine.connect() as conn:
        return conn.execute(text("SELECT consent FROM participants WHERE id = :i"), {"i": participant_id}).scalar_one()


@pytest.fixture
def bank(fresh_database: str, tmp_path: Path):
    settings = Settings(data_dir=tmp_path / "data", secret_key=SECRET)
    keys = KeyRing(SECRET, FileKeyStore(settings.keyring_path("bank"), SECRET))
    engine = create_engine(fresh_database, hide_parameters=True)
    sessions = make_sessionmaker(engine)
    with transaction(sessions) as session:
        people = [build(session, ref=f"file:person-{n}.json", keys=keys)[:2] for n in range(4)]
    yield settings, keys, engine, sessions, people
    engine.dispose()


def test_a_restored_backup_never_shows_a_withdrawn_person_and_everyone_else_decrypts(bank, fresh_database, tmp_path):
    settings, keys, engine, sessions, people = bank
    ledger = WithdrawalLedger.of(settings, load_signer(settings))
    trusted = TrustedKeys.of(settings)
    (early, _), (victim, victim_agent), (later, _), (stays, _) = people
    with transaction(sessions) as session:  # before the backup: in the ledger and in the backup alike
        withdraw(session, keys, early.id, audit.Actor("participant", "self"), ledger=ledger)

    assert publish_checkpoint(sessions, load_signer(settings), CheckpointFile.of(settings))
    manifest = back_up(settings, fresh_database, tmp_path / "backup", trusted)
    assert manifest.ledger_entries == 1 and set(manifest.files) == {DUMP, "audit-heads/checkpoints.jsonl"}
    assert not any("keyring" in p.name for p in (tmp_path / "backup").rglob("*"))

    for person in (victim, later):  # after the backup: only the ledger knows
        with transaction(sessions) as session:
            withdraw(session, keys, person.id, audit.Actor("participant", "self"), ledger=ledger)
    gone_live = naming(engine, [victim.id, victim_agent.id])
    assert readable(engine, keys, stays.id).startswith("Question 0")

    # The backup as it is would bring the victim back: a plain pg_restore shows them consenting.
    staged = stage(fresh_database, tmp_path / "backup" / DUMP)
    try:
        assert consent(create_engine(staged.url), victim.id) != ConsentStatus.WITHDRAWN
    finally:
        staged.discard()

    engine.dispose()
    done = restore(settings, fresh_database, tmp_path / "backup", keys, trusted, OPERATOR, migrate)
    assert done.reapplied == [victim.id, later.id]
    assert done.rekeyed == 1  # the one who stays: their key as the last withdrawal re-wrapped it

    restored = create_engine(fresh_database, hide_parameters=True)
    try:
        for person in (early, victim, later):
            assert consent(restored, person.id) == ConsentStatus.WITHDRAWN
        assert naming(restored, [victim.id, victim_agent.id]) == gone_live  # only the tombstone, as live
        assert readable(restored, keys, stays.id).startswith("Question 0")
        with restored.connect() as conn:
            actions = conn.execute(text("SELECT action FROM audit_events ORDER BY id")).scalars().all()
        assert actions.count("participant.withdraw") == 3 and actions[-1] == "bank.restore"
    finally:
        restored.dispose()


def test_a_restore_refuses_a_ledger_edited_cut_or_older_than_the_backup(bank, fresh_database, tmp_path):
    settings, keys, engine, sessions, people = bank
    ledger = WithdrawalLedger.of(settings, load_signer(settings))
    trusted = TrustedKeys.of(settings)
    for person, _ in people[:2]:
        with transaction(sessions) as session:
            withdraw(session, keys, person.id, audit.Actor("participant", "self"), ledger=ledger)
    back_up(settings, fresh_database, tmp_path / "backup", trusted)
    with transaction(sessions) as session:
        withdraw(session, keys, people[2][0].id, audit.Actor("participant", "self"), ledger=ledger)
    path = settings.withdrawal_ledger_path
    kept = path.read_text()
    lines = kept.splitlines()
    assert not read_ledger(path, trusted).problems and len(lines) == 3

    edited = json.loads(lines[2]) | {"participant_id": str(people[3][0].id)}
    for broken, says in (
        ("\n".join([*lines[:2], json.dumps(edited)]) + "\n", "signature does not verify"),
        ("\n".join([lines[0], lines[2]]) + "\n", "does not follow"),
        ("\n".join(lines[:1]) + "\n", "not the one this backup was taken beside"),
    ):
        path.write_text(broken)
        with pytest.raises(ConfigurationError, match=says):
            restore(settings, fresh_database, tmp_path / "backup", keys, trusted, OPERATOR, migrate)
        # The bank's database was not touched: the last withdrawal is still there.
        assert consent(engine, people[2][0].id) == ConsentStatus.WITHDRAWN
    path.write_text(kept)
    (tmp_path / "backup" / DUMP).write_bytes(b"not a dump")
    with pytest.raises(ConfigurationError, match="changed since it was written"):
        restore(settings, fresh_database, tmp_path / "backup", keys, trusted, OPERATOR, migrate)
