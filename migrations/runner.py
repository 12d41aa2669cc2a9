"""Running the Alembic migrations, which are the only source of the schema.

The bank's domain never imports this package (its migrations import the domain's models); the
application hands ``SCHEMA`` to ``open_bank`` and the doctor, which need only the ``Schema`` interface.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

from agentbank.core.settings import Settings
from agentbank.db.connections import owner_database_url
from agentbank.db.roles import enable_app_login

SCRIPT_LOCATION = Path(__file__).parent


def alembic_config(url: str | None = None, connection: Connection | None = None) -> Config:
    """An Alembic configuration for the bank's migrations.

    With neither argument, ``migrations/env.py`` reads the URL from the settings.
    """
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    if url is not None:
        # ConfigParser interpolation treats % specially; URLs may hold percent-encoded characters.
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade(config: Config, revision: str = "head") -> None:
    """Apply migrations up to ``revision``."""
    command.upgrade(config, revision)


def head_revision() -> str | None:
    """The newest migration in the package."""
    return ScriptDirectory(str(SCRIPT_LOCATION)).get_current_head()


def current_revision(connection: Connection) -> str | None:
    """The migration a database is at, or None for an empty database."""
    return MigrationContext.configure(connection).get_current_revision()


class AlembicSchema:
    """The bank's schema as its Alembic migrations define it (``agentbank.db.schema.Schema``)."""

    def current_revision(self, connection: Connection) -> str | None:
        return current_revision(connection)

    def head_revision(self) -> str | None:
        return head_revision()

    def upgrade(self, url: str) -> None:
        upgrade(alembic_config(url))

    def migrate(self, settings: Settings) -> None:
        migrate_database(settings)


SCHEMA = AlembicSchema()


def migrate_database(settings: Settings, revision: str = "head") -> None:
    """Apply migrations as the owner; on the embedded server, then let the application role log in.

    A configured server's application role gets its login from its administrator (see deploy/).
    """
    owner = owner_database_url(settings)
    upgrade(alembic_config(owner), revision)
    if settings.database_url is None:
        enable_app_login(owner)
