"""Backups that keep withdrawals: a restore re-applies every withdrawal the ledger recorded after the backup."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, select, text
from sqlalchemy.exc import ProgrammingError

from agentbank.audit import log as audit
from agentbank.audit.checkpoints import CheckpointFile, publish_checkpoint
from agentbank.audit.signing_keys import load_signer
from agentbank.audit.trust import TrustedKeys
from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings
from agentbank.core.statuses import ConsentStatus
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.db.dumps import stage
from agentbank.db.inventory import INVENTORY, Kind
from agentbank.db.models import Agent, Participant, Transcript, Turn
from agentbank.keys.crypto import KeyRing
from agentbank.keys.keystore import FileKeyStore
from agentbank.participants.backups import DUMP, back_up
from agentbank.participants.ledger import WithdrawalLedger, read_ledger
from agentbank.participants.restoring import restore
from agentbank.participants.withdrawal import withdraw
from migrations.runner import alembic_config, upgrade
from tests.support.factories import SECRET, build

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


@contextmanager
def bank_on(url: str, data_dir: Path):
    """Four people with built agents in the database at ``url``, a file keyring and a withdrawal ledger."""
    settings = Settings(data_dir=data_dir, secret_key=SECRET)
    keys = KeyRing(SECRET, FileKeyStore(settings.keyring_path("bank"), SECRET))
    engine = create_engine(url, hide_parameters=True)
    sessions = make_sessionmaker(engine)
    with transaction(sessions) as session:
        people = [build(session, ref=f"file:person-{n}.json", keys=keys)[:2] for n in range(4)]
    try:
        yield settings, keys, engine, sessions, people
    finally:
        engine.dispose()


@pytest.fixture
def bank(fresh_database: str, tmp_path: Path):
    with bank_on(fresh_database, tmp_path / "data") as opened:
        yield opened


def back_up_withdraw_restore(bank, url: str, restore_url: str, backup: Path) -> None:
    """Withdraw one person, back up, withdraw two more, restore: nobody withdrawn comes back, and the one who
    stays decrypts. ``url`` reaches the bank's database as its owner; ``restore_url`` as a role that may
    create databases and pgvector (the same on the embedded server; the superuser on a distribution's)."""
    settings, keys, engine, sessions, people = bank
    ledger = WithdrawalLedger.of(settings, load_signer(settings))
    trusted = TrustedKeys.of(settings)
    (early, _), (victim, victim_agent), (later, _), (stays, _) = people
    with transaction(sessions) as session:  # before the backup: in the ledger and in the backup alike
        withdraw(session, keys, early.id, audit.Actor("participant", "self"), ledger=ledger)

    assert publish_checkpoint(sessions, load_signer(settings), CheckpointFile.of(settings))
    manifest = back_up(settings, url, backup, trusted)
    assert manifest.ledger_entries == 1 and set(manifest.files) == {DUMP, "audit-heads/checkpoints.jsonl"}
    assert not any("keyring" in p.name for p in backup.rglob("*"))

    for person in (victim, later):  # after the backup: only the ledger knows
        with transaction(sessions) as session:
            withdraw(session, keys, person.id, audit.Actor("participant", "self"), ledger=ledger)
    gone_live = naming(engine, [victim.id, victim_agent.id])
    assert readable(engine, keys, stays.id).startswith("Question 0")

    # The backup as it is would bring the victim back: a plain pg_restore shows them consenting.
    staged = stage(restore_url, backup / DUMP)
    plain = create_engine(staged.url)
    try:
        assert consent(plain, victim.id) != ConsentStatus.WITHDRAWN
    finally:
        plain.dispose()
        staged.discard()

    engine.dispose()
    done = restore(settings, restore_url, backup, keys, trusted, OPERATOR, migrate)
    assert done.reapplied == [victim.id, later.id]
    assert done.rekeyed == 1  # the one who stays: their key as the last withdrawal re-wrapped it

    restored = create_engine(url, hide_parameters=True)
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


def test_a_restored_backup_never_shows_a_withdrawn_person_and_everyone_else_decrypts(bank, fresh_database, tmp_path):
    back_up_withdraw_restore(bank, fresh_database, fresh_database, tmp_path / "backup")


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
    # The bank still running (a session open on its database): refused before anything is staged.
    with engine.connect() as conn, pytest.raises(ConfigurationError, match=r"session\(s\) are connected"):
        conn.execute(text("SELECT 1"))
        restore(settings, fresh_database, tmp_path / "backup", keys, trusted, OPERATOR, migrate)
    (tmp_path / "backup" / DUMP).write_bytes(b"not a dump")
    with pytest.raises(ConfigurationError, match="changed since it was written"):
        restore(settings, fresh_database, tmp_path / "backup", keys, trusted, OPERATOR, migrate)


def distribution_server() -> Path | None:
    """The newest of the distribution's PostgreSQL servers that has pgvector (deploy/host/install.sh's)."""
    found = [
        p for p in Path("/usr/lib/postgresql").glob("*/bin")
        if (p / "postgres").exists() and p.parent.name.isdigit()
        and Path(f"/usr/share/postgresql/{p.parent.name}/extension/vector.control").exists()
    ]  # fmt: skip
    return max(found, key=lambda p: int(p.parent.name), default=None)


@pytest.fixture
def host_cluster() -> Iterator[tuple[str, str]]:
    """A cluster of the distribution's server set up as deploy/host/topology.sh sets its own: run by the
    ``postgres`` user, the owner ``agentbank`` (no superuser, cannot create databases) with its database
    and pgvector, and ``agentbank_app``. Yields the owner's URL and the superuser's, both on that database."""
    server = distribution_server()
    if server is None or os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("the distribution's PostgreSQL with pgvector is not installed, or not as root (deploy/host)")
    root = Path(tempfile.mkdtemp(prefix="agentbank-host-"))  # the postgres user reaches it
    os.chmod(root, 0o755)
    pgdata, socket = root / "pgdata", root / "socket"
    for path in (pgdata, socket):
        path.mkdir(mode=0o700)
        shutil.chown(path, "postgres")
    (root / "postgres.log").touch()
    shutil.chown(root / "postgres.log", "postgres")
    as_pg = ["runuser", "-u", "postgres", "--"]
    initdb = [str(server / "initdb"), "-D", str(pgdata), "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8",
              "--auth-local=trust", "--no-instructions"]  # fmt: skip
    subprocess.run([*as_pg, *initdb], check=True, capture_output=True)
    with (pgdata / "postgresql.conf").open("a") as conf:
        conf.write(f"listen_addresses = ''\nunix_socket_directories = '{socket}'\n")
    subprocess.run([*as_pg, str(server / "pg_ctl"), "-D", str(pgdata), "-l", str(root / "postgres.log"), "-w", "start"],
                   check=True, capture_output=True)  # fmt: skip
    superuser = f"postgresql+psycopg://postgres@/agentbank?host={socket}"
    try:
        admin = create_engine(superuser.replace("/agentbank?", "/postgres?"), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text("CREATE ROLE agentbank LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE"))
            conn.execute(text("CREATE ROLE agentbank_app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT"))
            conn.execute(text("CREATE DATABASE agentbank OWNER agentbank"))
        admin.dispose()
        extension = create_engine(superuser, isolation_level="AUTOCOMMIT")
        with extension.connect() as conn:
            conn.execute(text("CREATE EXTENSION vector"))
        extension.dispose()
        owner = f"postgresql+psycopg://agentbank@/agentbank?host={socket}"
        migrate(owner)
        yield owner, superuser
    finally:
        subprocess.run([*as_pg, str(server / "pg_ctl"), "-D", str(pgdata), "-m", "immediate", "stop"],
                       capture_output=True, check=False)  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow
def test_the_same_on_the_host_topology_with_the_distributions_postgresql(host_cluster, tmp_path):
    owner, superuser = host_cluster
    with bank_on(owner, tmp_path / "data") as bank:
        back_up_withdraw_restore(bank, owner, superuser, tmp_path / "backup")
    # The restored database is the owner's as before: it migrates it, and the application role keeps its
    # grants (reads the bank, cannot rewrite the audit log).
    engine = create_engine(owner)
    with engine.connect() as conn:
        assert (
            conn.execute(
                text("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'agentbank'")
            ).scalar_one()
            == "agentbank"
        )
    engine.dispose()
    migrate(owner)
    app = create_engine(owner.replace("agentbank@", "agentbank_app@"))
    with app.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM participants")).scalar_one() == 4
        with pytest.raises(ProgrammingError):
            conn.execute(text("DELETE FROM audit_events"))
    app.dispose()
