"""What the bank needs to know of its schema, without depending on the migrations that define it.

The migrations import the domain's models, so the domain cannot import them back; whoever opens the bank
(the command line, the API, the worker) passes the migrations' ``Schema`` in.
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy import Connection, Engine

from agentbank.errors import ConfigurationError


class Schema(Protocol):
    """The schema's revisions, and a way to bring a database to the newest one."""

    def current_revision(self, connection: Connection) -> str | None:
        """The revision a database is at, or None for an empty database."""
        ...

    def head_revision(self) -> str | None:
        """The newest revision this version of the bank has."""
        ...

    def upgrade(self, url: str) -> None:
        """Bring the database at ``url`` to the newest revision."""
        ...


def require_current(engine: Engine, schema: Schema, *, migrate: bool) -> None:
    """Refuse a database whose schema is not the newest, or (``migrate``) bring it there first.

    The embedded database is the bank's own and is migrated, so that a first command on a fresh data
    directory just works; a configured server is migrated on purpose, with ``agentbank db upgrade``.
    """
    with engine.connect() as conn:
        revision = schema.current_revision(conn)
    head = schema.head_revision()
    if revision == head:
        return
    if migrate:
        schema.upgrade(engine.url.render_as_string(hide_password=False))
        return
    raise ConfigurationError(
        f"the database schema is at {revision or 'nothing'}, this version of the bank needs {head}",
        hint="run `agentbank db upgrade`",
    )
