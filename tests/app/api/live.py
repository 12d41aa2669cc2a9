"""The API on a database whose commits other connections see: for tests where workers run at the same time."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from fastapi.testclient import TestClient
from sqlalchemy import create_engine
from sqlalchemy.orm import sessionmaker

from agentbank.access.clients import create_client
from agentbank.core.settings import Settings
from agentbank.runtime.bank import Bank
from app.api import create_app
from tests.app.api.conftest import OPERATOR, Api, publisher
from tests.support.factories import keyring


@dataclass
class LiveApi(Api):
    """An ``Api`` whose session commits what the tests write, so the API and the workers see it."""

    def token(self, name: str, *scopes: str) -> dict[str, str]:
        created = create_client(self.session, name, list(scopes), OPERATOR)
        self.session.commit()
        response = self.client.post(
            "/oauth/token", data={"grant_type": "client_credentials"}, auth=(created.client.client_id, created.secret)
        )
        assert response.status_code == 200, response.text
        return {"Authorization": f"Bearer {response.json()['access_token']}", "X-Client-Id": created.client.client_id}


@contextmanager
def live_api(database_url: str, settings: Settings) -> Iterator[LiveApi]:
    """The application on ``database_url`` (a database of the test's own), each connection its own transaction."""
    engine = create_engine(database_url, pool_size=8, hide_parameters=True)
    sessions = sessionmaker(bind=engine, expire_on_commit=False)
    bank = Bank(settings, engine, sessions, keyring())
    try:
        with TestClient(create_app(settings, bank), base_url="http://localhost") as client, sessions() as session:
            session.info["publish"] = publisher(settings)
            yield LiveApi(client, session, bank)
    finally:
        engine.dispose()
