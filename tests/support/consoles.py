"""Shared helpers of the tests (moved from ``tests.app.api.test_console_sessions``)."""

from __future__ import annotations

from agentbank.access import people
from agentbank.access.clients import create_client
from tests.app.api.conftest import OPERATOR


def signed_in(api, email="ada@example.org", scopes=("review",)):
    """A linked person's console session: the cookie header, and the session's CSRF token."""
    client = create_client(api.session, "reviewers", list(scopes), OPERATOR).client
    person = people.link_person(api.session, client.client_id, email, OPERATOR)
    token, _ = people.open_session(api.session, person, 600)
    return client, {"Cookie": f"agentbank_session={token}"}, token
