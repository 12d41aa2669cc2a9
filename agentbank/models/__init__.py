"""ORM models, one module per family of tables. Importing this package registers them all."""

from agentbank.db.base import Base

__all__ = ["Base"]
