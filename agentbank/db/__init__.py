"""Database access: the embedded server, engines, sessions and migrations."""

from agentbank.db.base import Base
from agentbank.db.connections import database_url, make_engine, make_sessionmaker, owner_database_url, transaction

__all__ = ["Base", "database_url", "make_engine", "make_sessionmaker", "owner_database_url", "transaction"]
