"""Crypto-shredding: after a withdrawal no key anywhere in the bank's files opens the person's data."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, select, text

from agentbank.audit import log as audit
from agentbank.building.transcripts import store_interview
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.db.models import Participant
from agentbank.keys.crypto import (
    DataKeyDestroyedError,
)
from agentbank.keys.rotation import purge_unused, rotate
from agentbank.participants.withdrawal import withdraw
from agentbank.runtime.bank import open_keyring
from tests.support.factories import interview, keyring
from tests.support.keys import first_turn, keys_that_open


def test_rotation_rewraps_everyone_else_and_drops_the_one_withdrawing(db):
    keys = keyring()
    alice = store_interview(db, interview("file:alice.json"), keys)
    bob = store_interview(db, interview("file:bob.json"), keys)
    old = bob.wrapped_key
    rotation = rotate(db, keys, dropping=alice.id)
    assert alice.wrapped_key is None
    assert bob.wrapped_key != old and rotation.rewrapped >= 1
    assert keys.cipher(bob.id, bob.wrapped_key).open(first_turn(db, bob.id)).startswith("Question 0")
    # Until the transaction commits the old version lives: a rollback would need it.
    assert set(rotation.retired) <= set(keys.store.versions())


def test_purge_keeps_the_versions_rows_need(db):
    keys = keyring()
    carol = store_interview(db, interview("file:carol.json"), keys)
    unused = keys.store.add_version()
    needed = carol.wrapped_key
    keys.store.add_version()  # the newest always stays
    assert unused in purge_unused(db, keys)
    assert keys.cipher(carol.id, needed).open(first_turn(db, carol.id))


@pytest.mark.slow
def test_after_withdrawal_no_file_holds_a_key_to_the_persons_data(bank_files):
    settings, url = bank_files
    engine = create_engine(url)
    sessions = make_sessionmaker(engine)
    keys = open_keyring(settings, engine.url.database)
    with transaction(sessions) as session:
        alice = store_interview(session, interview("file:alice.json"), keys)
        bob = store_interview(session, interview("file:bob.json"), keys)
    with sessions() as session:
        alice_turn, bob_turn = first_turn(session, alice.id), first_turn(session, bob.id)
    secret = settings.secret_key.get_secret_value()
    assert keys_that_open(settings.data_dir, secret, alice.id, alice_turn) >= 1  # the scan finds live keys

    with transaction(sessions) as session:
        withdraw(session, keys, alice.id, audit.Actor("participant", str(alice.id)), ledger=None)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM participants"))
        conn.execute(text("CHECKPOINT"))

    assert keys_that_open(settings.data_dir, secret, alice.id, alice_turn) == 0
    with sessions() as session:
        stored = {p.id: p.wrapped_key for p in session.scalars(select(Participant))}
    assert stored[alice.id] is None
    with pytest.raises(DataKeyDestroyedError):
        keys.cipher(alice.id, alice.wrapped_key)  # the key held in memory before: its KEK is gone
    assert keys.cipher(bob.id, stored[bob.id]).open(bob_turn).startswith("Question 0")
    assert keys_that_open(settings.data_dir, secret, bob.id, bob_turn) >= 1
    assert len(keys.store.versions()) == 1
    engine.dispose()
