"""Alembic migrations of the bank's schema (run with ``agentbank db upgrade``)."""
