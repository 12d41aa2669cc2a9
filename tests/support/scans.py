"""Shared helpers of the tests (moved from ``tests.app.api.test_withdrawal``)."""

from __future__ import annotations

from sqlalchemy import text

SCANNED_TYPES = ("text", "character varying", "bytea", "jsonb", "json", "ARRAY")


def scan_database(session, needles: list[str]) -> list[str]:
    """Every (table.column) whose stored value contains one of ``needles`` (bytea read as latin-1)."""
    columns = session.execute(
        text(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND data_type = ANY(:types)"
        ),
        {"types": list(SCANNED_TYPES)},
    ).all()
    found = []
    for table, column, kind in columns:
        for (value,) in session.execute(text(f'SELECT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL')):
            plain = bytes(value).decode("latin-1") if kind == "bytea" else str(value)
            found += [f"{table}.{column}" for needle in needles if needle.lower() in plain.lower()]
    return found
