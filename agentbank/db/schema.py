"""What the bank needs to know of its schema, without depending on the migrations that define it.

The migrations import the domain's models, so the domain cannot import them back; whoever opens the bank
(the command line, the API, the worker) passes the migrations' ``Schema`` in.
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy import Connection, Engine

from agentbank.core.errors import ConfigurationError
from agentbank.core.settings import Settings


class Schema(Protocol):
    """The schema's revisions, and a way to bring a database to the newest one."""

    def current_revision(self, connection: Connection) -> str | None:
        """The revision a database is at, or None for an empty database."""
        ...

    def head_revision(self) -> str | None:
        """The newest revision this version of the bank has."""
        ...

    def upgrade(self, url: str) -> None:
        """Bring the database at ``url`` (reached as its owner) to the newest revision."""
        ...

    def migrate(self, settings: Settings) -> None:
        """Bring the bank's database to the newest revision, as the owner of its tables."""
        ...


def require_current(engine: Engine, schema: Schema) -> None:
    """Refuse a database whose schema is not the newest (a configured server is migrated on purpose)."""
    with engine.connect() as conn:
        revision = schema.current_revision(conn)
    head = schema.head_revision()
    if revision == head:
        return
    raise ConfigurationError(
        f"the database schema is at {revision or 'nothing'}, this version of the bank needs {head}",
        hint="run `agentbank db upgrade`",
    )
