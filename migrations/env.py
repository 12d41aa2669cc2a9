"""Alembic environment: one connection, the bank's metadata, transactional DDL."""

from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection, create_engine, pool

import agentbank.db.models  # registers every table on the metadata
from agentbank.core.settings import Settings
from agentbank.db.connections import owner_database_url

config = context.config
if config.config_file_name:  # the alembic command line; `agentbank db` configures logging itself
    fileConfig(config.config_file_name, disable_existing_loggers=False)
target_metadata = agentbank.db.models.Base.metadata


def include_name(name: str | None, type_: str, _parents: dict[str, str | None]) -> bool:
    """The task queue's tables belong to its own schema file (applied by a migration), not to our models."""
    return not (type_ == "table" and name is not None and name.startswith("procrastinate_"))


def run_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url") or owner_database_url(Settings()),
        target_metadata=target_metadata,
        include_name=include_name,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    # Migrations run as the tables' owner: the application role has no DDL rights and, on a fresh
    # embedded server, no login until the first migration has run.
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url") or owner_database_url(Settings())
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        include_name=include_name,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
