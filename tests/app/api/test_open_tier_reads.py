"""Reads of a published release, served like the static files they are: no transaction and no audit event per
read once the token is known, the same bytes for every client, a revoked client refused at once, files that
match their signed manifest.

The tests that count transactions run on a database of their own whose changes commit, as in production: a
token's change is heard only once it commits."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine, event, func, select

from agentbank.access.clients import create_client, revoke_client
from agentbank.audit import notes
from agentbank.audit.signing_keys import load_signer
from agentbank.core.settings import Settings
from agentbank.db.connections import make_sessionmaker, transaction
from agentbank.db.models import AuditEvent
from agentbank.instruments import load_instrument
from agentbank.publication.shelf import Shelf, ensure_published, note_text
from agentbank.runtime.bank import Bank
from app.api import create_app
from app.api.limits import MemoryRateLimiter
from tests.app.api.conftest import OPERATOR
from tests.app.api.factories import exact_release, population
from tests.support.factories import SECRET, keyring

URL = "/v1/open/instruments/gss/items/cappun/distribution"
REFERENCE = Path("../shared/data")


@dataclass
class Committed:
    client: TestClient
    bank: Bank
    engine: Engine
    settings: Settings

    def token(self, name: str) -> tuple[str, str]:
        """A new client's id and an API token of it, committed."""
        with transaction(self.bank.sessions) as session:
            created = create_client(session, name, ["aggregate:read"], OPERATOR)
            client_id, secret = created.client.client_id, created.secret
        answer = self.client.post("/oauth/token", data={"grant_type": "client_credentials"}, auth=(client_id, secret))
        return client_id, answer.json()["access_token"]


@pytest.fixture
def committed(fresh_database, tmp_path) -> Iterator[Committed]:
    settings = Settings(
        secret_key=SECRET, data_dir=tmp_path, rate_limit_per_minute=10_000, reference_data_dir=REFERENCE
    )
    engine = create_engine(fresh_database)
    sessions = make_sessionmaker(engine)
    bank = Bank(settings, engine, sessions, keyring())
    with transaction(sessions) as session:
        population(session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
        exact_release(session)
    ensure_published(sessions, Shelf(settings.release_files_path), load_signer(settings),
                     lambda key: load_instrument(key, REFERENCE), REFERENCE)  # fmt: skip
    app = create_app(settings, bank)  # listening, as the bank's own API process does
    with TestClient(app, base_url="http://localhost") as client:
        tokens = app.state.open_reads.tokens
        deadline = time.monotonic() + 10
        while not tokens.listening and time.monotonic() < deadline:
            time.sleep(0.02)
        yield Committed(client, bank, engine, settings)
    engine.dispose()


def _transactions(engine: Engine) -> tuple[list[str], object]:
    begun: list[str] = []

    def counted(conn) -> None:
        begun.append("begin")

    event.listen(engine, "begin", counted)
    return begun, counted


def _audit_events(api: Committed) -> int:
    with api.bank.sessions() as session:
        return session.scalar(select(func.count()).select_from(AuditEvent)) or 0


def test_a_published_read_opens_no_transaction_and_writes_no_audit_event(committed):
    _, token = committed.token("researcher")
    headers = {"Authorization": f"Bearer {token}"}
    first = committed.client.get(URL, params={"breakdowns": "sex"}, headers=headers)  # the token looked up once
    assert first.status_code == 200
    events = _audit_events(committed)
    begun, listener = _transactions(committed.engine)
    try:
        for fmt in ("json", "csv", "parquet", "dta", "sav"):
            assert (
                committed.client.get(URL, params={"breakdowns": "sex", "format": fmt}, headers=headers).status_code
                == 200
            )
        again = committed.client.get(
            URL, params={"breakdowns": "sex"}, headers={**headers, "If-None-Match": first.headers["ETag"]}
        )
        by_digest = committed.client.get(first.headers["Content-Location"], headers=headers)
    finally:
        event.remove(committed.engine, "begin", listener)
    assert again.status_code == 304 and by_digest.content == first.content
    assert begun == []  # seven reads, no transaction
    assert _audit_events(committed) == events  # and no audit event: reading a release uses no agent
    counts = committed.client.app.state.open_reads.counts
    assert counts.pending() == 8 and counts.flush() == 8  # the access log counts them, in one batch


def test_a_revoked_client_is_refused_at_once(committed):
    client_id, token = committed.token("researcher")
    headers = {"Authorization": f"Bearer {token}"}
    first = committed.client.get(URL, params={"breakdowns": "sex"}, headers=headers)
    assert first.status_code == 200 and committed.client.app.state.open_reads.tokens.holds(token)
    with transaction(committed.bank.sessions) as session:  # as the command line does, in another transaction
        revoke_client(session, client_id, OPERATOR)
    tokens = committed.client.app.state.open_reads.tokens
    deadline = time.monotonic() + 2  # the commit's notification, delivered in milliseconds
    while tokens.holds(token) and time.monotonic() < deadline:
        time.sleep(0.005)
    for sent in (headers, {**headers, "If-None-Match": first.headers["ETag"]}):
        assert committed.client.get(URL, params={"breakdowns": "sex"}, headers=sent).status_code == 401
    assert committed.client.get(first.headers["Content-Location"], headers=headers).status_code == 401


def test_published_files_match_their_manifest_and_its_signature(committed):
    shelf = Shelf(committed.settings.release_files_path)
    release = int(shelf.current.read_text())
    data = shelf.manifest(release).read_bytes()
    manifest = json.loads(data)
    assert manifest["release"] == release and manifest["files"]
    for key, entry in manifest["files"].items():
        path = shelf.file(entry["sha256"], key.rsplit("/", 1)[1])
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], key
        assert path.stat().st_size == entry["bytes"]
    note = notes.Note.parse(shelf.note(release).read_text())
    verifier = load_signer(committed.settings).verifier
    assert note.text == note_text(verifier.name, release, hashlib.sha256(data).hexdigest())
    assert note.signed_by(verifier)
    with committed.bank.sessions() as session:
        published = session.scalars(select(AuditEvent).where(AuditEvent.action == "release.published")).one()
        assert published.details["manifest_sha256"] == hashlib.sha256(data).hexdigest()


def test_a_damaged_file_is_never_served(committed):
    _, token = committed.token("researcher")
    headers = {"Authorization": f"Bearer {token}"}
    shelf = Shelf(committed.settings.release_files_path)
    manifest = json.loads(shelf.manifest(int(shelf.current.read_text())).read_bytes())
    entry = manifest["files"]["gss/cappun/sex/csv"]
    path = shelf.file(entry["sha256"], "csv")
    path.write_bytes(path.read_bytes().replace(b"male", b"mole"))
    damaged = committed.client.get(URL, params={"breakdowns": "sex", "format": "csv"}, headers=headers)
    assert damaged.status_code == 503 and damaged.json()["error"]["code"] == "release_files_damaged"


def test_a_published_body_is_the_same_for_every_client_and_names_none(committed):
    alice, bob = committed.token("alice"), committed.token("bob")
    for fmt in ("json", "csv"):
        first = committed.client.get(URL, params={"breakdowns": "sex", "format": fmt},
                                     headers={"Authorization": f"Bearer {alice[1]}"})  # fmt: skip
        second = committed.client.get(URL, params={"breakdowns": "sex", "format": fmt},
                                      headers={"Authorization": f"Bearer {bob[1]}"})  # fmt: skip
        assert first.status_code == second.status_code == 200 and first.content == second.content
        assert alice[0].encode() not in second.content and bob[0].encode() not in second.content


def test_a_published_read_counts_against_the_callers_rate_limit(committed):
    _, token = committed.token("researcher")
    headers = {"Authorization": f"Bearer {token}"}
    assert committed.client.get(URL, params={"breakdowns": "sex"}, headers=headers).status_code == 200
    committed.client.app.state.open_reads.limiter = MemoryRateLimiter(2)
    answers = [committed.client.get(URL, params={"breakdowns": "sex"}, headers=headers).status_code for _ in range(3)]
    assert answers == [200, 200, 429]


def test_a_304_is_refused_for_a_table_the_release_does_not_hold(api):
    """A validator sent back is the client's word: the read is answered 304 only for a table that exists."""
    population(api.session, [({"sex": s}, c) for s in (1, 2) for c in (1, 2) for _ in range(10)])
    exact_release(api.session)
    headers = api.token("researcher", "aggregate:read")
    url = "/v1/open/instruments/gss/items/natspac/distribution"  # no agent of this release answered it
    r = api.client.get(url, headers={**headers, "If-None-Match": "*"})
    assert r.status_code == 404
