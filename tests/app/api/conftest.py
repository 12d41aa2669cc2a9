"""An API on the test database: each request's commit is a savepoint inside the test's transaction."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from agentbank.access.clients import create_client, issue_participant_token
from agentbank.audit import log as audit
from agentbank.audit.signing_keys import load_signer
from agentbank.core.settings import Settings
from agentbank.instruments import load_instrument
from agentbank.publication.shelf import Shelf, point_current
from agentbank.publication.shelf import publish as publish_release
from agentbank.runtime.bank import Bank
from app.api import create_app
from tests.support.factories import SECRET, keyring

OPERATOR = audit.Actor("operator", "test")


@dataclass
class Api:
    client: TestClient
    session: Session
    bank: Bank

    def token(self, name: str, *scopes: str) -> dict[str, str]:
        """A new client with these scopes, and the headers of a token obtained the OAuth2 way."""
        created = create_client(self.session, name, list(scopes), OPERATOR)
        response = self.client.post(
            "/oauth/token",
            data={"grant_type": "client_credentials"},
            auth=(created.client.client_id, created.secret),
        )
        assert response.status_code == 200, response.text
        return {"Authorization": f"Bearer {response.json()['access_token']}", "X-Client-Id": created.client.client_id}

    def participant_headers(self, participant) -> dict[str, str]:
        return {"Authorization": f"Bearer {issue_participant_token(self.session, participant, 600)}"}


def publisher(settings: Settings):
    """Publish a release's files and serve it, in the test's transaction (a worker does so after its commit)."""
    shelf, signer = Shelf(settings.release_files_path), load_signer(settings)

    def publish(session: Session, release_id: int) -> None:
        reference = settings.reference_data_dir
        publish_release(session, release_id, shelf, signer, lambda key: load_instrument(key, reference), reference)
        point_current(shelf, release_id)

    return publish


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(
        secret_key=SECRET, data_dir=tmp_path, rate_limit_per_minute=10_000, reference_data_dir="../shared/data"
    )


@pytest.fixture
def api(engine, settings) -> Iterator[Api]:
    with engine.connect() as conn:
        outer = conn.begin()
        sessions = sessionmaker(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
        bank = Bank(settings, engine, sessions, keyring())
        app = create_app(settings, bank, listen=False)  # its changes never commit: nothing to hear
        with TestClient(app, base_url="http://localhost") as client, sessions() as session:
            session.info["publish"] = publisher(settings)
            yield Api(client, session, bank)
        outer.rollback()
