"""What a Merkle leaf commits to: the use as the portal shows it (version 2), the chain hash alone for
events logged before leaves had versions (version 1), and bytes a browser can build the same way."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime

import pytest
from alembic import command
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from agentbank.audit import entries, tree
from agentbank.audit.checkpoints import sign_head
from agentbank.audit.log import GENESIS, SYSTEM, Actor, event_hash, record, sequence
from agentbank.audit.merkle import MemoryTree, leaf_hash
from agentbank.audit.signing_keys import AuditSigner
from agentbank.audit.verification import verify_log
from agentbank.building.transcripts import store_interview
from agentbank.db.models import AuditEvent
from agentbank.participants.portal import uses_of_agent
from migrations.runner import alembic_config, upgrade
from tests.support.factories import interview, keyring

SIGNER = AuditSigner.from_secret("audit-entries-secret-" * 3)


@pytest.mark.parametrize(
    ("number", "written"),
    [(2.0, "2"), (-0.0, "0"), (0.1, "0.1"), (1.5, "1.5"), (-123.25, "-123.25"), (1e16, "10000000000000000"),
     (1e21, "1e+21"), (1.2345e22, "1.2345e+22"), (1e-6, "0.000001"), (1e-7, "1e-7"), (1.5e-9, "1.5e-9"),
     (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"), (123456789.125, "123456789.125")],
)  # fmt: skip
def test_numbers_are_written_as_javascript_writes_them(number, written):
    assert entries.js_number(number) == written


def test_canonical_json_sorts_keys_by_code_point_and_keeps_text_as_is():
    value = {"b": [1, 2.5, True, None], "a": {"é": 'naïve "quoted"\n', "Z": "𝄞"}, "\U0001f600": 0, "\uffff": 1}
    assert entries.canonical(value) == (
        '{"a":{"Z":"𝄞","é":"naïve \\"quoted\\"\\n"},"b":[1,2.5,true,null],"\uffff":1,"\U0001f600":0}'
    )
    # Integers a browser cannot hold exactly are written as the double it reads them as.
    assert entries.canonical([2**53, 2**53 + 1, 10**21]) == "[9007199254740992,9007199254740992,1e+21]"


@pytest.mark.parametrize(
    ("action", "details"),
    [
        ("job.answer", {"instrument": "gss", "items": ["cappun"], "released": True, "purpose": "a study"}),
        ("job.answer", {"kind": "open", "question_sha256": ["ab" * 32], "withheld": 1}),
        ("operator.answer", {"purpose": "checking", "questions": ["Where  did you\tgrow up?"], "kind": "open"}),
        ("experiment.answer", {"experiment": "anchoring@1", "arms": ["low", "high"], "blinding": "blinded"}),
        ("review.withheld.decide", {"decision": "released", "condition": "interview"}),
        ("participant.view", {}),
    ],
)
def test_the_view_is_what_the_portal_shows(db, action, details):
    participant = store_interview(db, interview(), keyring())
    record(db, Actor("client", "team-a"), action, "restricted", participant_id=participant.id, details=details)
    sequence(db)
    event = db.scalars(select(AuditEvent).where(AuditEvent.action == action)).one()
    (shown,) = [u for u in uses_of_agent(db, participant.id, SYSTEM) if u.action == action]
    view = entries.view(event)
    assert (view["asked"], view["outcome"], view["purpose"]) == (shown.asked, shown.outcome, shown.purpose)
    assert (view["action"], view["tier"], view["actor_kind"], view["hash"]) == (
        shown.action, shown.tier, shown.actor_kind, shown.hash
    )  # fmt: skip
    assert view["at"] == int(shown.at.timestamp()) * 1_000_000 + shown.at.microsecond
    assert event.leaf_version == 2
    assert entries.leaf(event) == leaf_hash(hashlib.sha256(entries.canonical(view).encode()).digest())


def test_a_writer_cannot_choose_an_older_leaf_version(db):
    db.execute(text("SET LOCAL ROLE agentbank_app"))
    db.execute(text("INSERT INTO audit_events (created_at, actor_kind, actor_id, action, tier, details, leaf_version) "
                    "VALUES (now(), 'client', 'x', 'aggregate.read', 'open', '{}', 1)"))  # fmt: skip
    with pytest.raises(DBAPIError, match="permission denied"), db.begin_nested():
        db.execute(text("UPDATE audit_events SET leaf_version = 1"))
    db.execute(text("RESET ROLE"))
    assert db.scalar(select(AuditEvent.leaf_version).where(AuditEvent.actor_id == "x")) == 2


@pytest.fixture
def database_at(database_url: str):
    made: list[str] = []
    admin = create_engine(database_url, isolation_level="AUTOCOMMIT")

    def at(revision: str) -> str:
        name = f"agentbank_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        made.append(name)
        url = make_url(database_url).set(database=name).render_as_string(hide_password=False)
        upgrade(alembic_config(url), revision)
        return url

    yield at
    with admin.connect() as conn:
        for name in made:
            conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    admin.dispose()


def test_events_logged_before_the_upgrade_keep_their_leaves_and_later_ones_commit_to_their_content(database_at):
    url = database_at("0028")
    engine = create_engine(url)
    prev, hashes = GENESIS, []
    with engine.begin() as conn:  # a log as a bank kept it before leaves had versions
        for n in range(5):
            event = AuditEvent(created_at=datetime(2026, 11, 1, n, tzinfo=UTC), actor_kind="client", actor_id="t",
                               action="aggregate.read", tier="open", details={"n": n})  # fmt: skip
            digest = event_hash(prev, event)
            conn.execute(
                text("INSERT INTO audit_events (seq, created_at, actor_kind, actor_id, action, tier, details, "
                     "prev_hash, hash) VALUES (:s, :t, 'client', 't', 'aggregate.read', 'open', :d, :p, :h)"),
                {"s": n + 1, "t": event.created_at, "d": json.dumps(event.details), "p": prev, "h": digest},
            )  # fmt: skip
            prev = digest
            hashes.append(digest)
    signed_root = MemoryTree(leaf_hash(h) for h in hashes).root()  # what its heads signed and witnesses hold
    upgrade(alembic_config(url))
    try:
        with Session(engine) as session, session.begin():
            assert tree.StoredTree(session).root(5) == signed_root
            record(session, Actor("client", "t"), "aggregate.read", "open")
            sequence(session)
            versions = list(session.scalars(select(AuditEvent.leaf_version).order_by(AuditEvent.seq)))
            assert versions == [1, 1, 1, 1, 1, 2]
            assert sign_head(session, SIGNER).seq == 6
            assert verify_log(session, SIGNER.public_key).ok
        # Going back would let the older code rebuild these leaves as version 1: refused.
        with pytest.raises(DBAPIError, match="version-2 leaves"):
            command.downgrade(alembic_config(url), "0028")
    finally:
        engine.dispose()
