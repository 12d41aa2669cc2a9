"""The data inventory matches the migrated database: every column classified, none classified that is gone."""

from sqlalchemy import text

from agentbank.db.inventory import INVENTORY, NOT_DATA, QUEUE_TABLES_PREFIX, Kind


def columns(db) -> dict[str, dict[str, str]]:
    rows = db.execute(text(
        "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public'"
    ))  # fmt: skip
    out: dict[str, dict[str, str]] = {}
    for table, column, data_type in rows:
        out.setdefault(table, {})[column] = data_type
    return out


def test_every_column_of_every_table_is_classified_and_nothing_else_is(db):
    schema = columns(db)
    ours = {t: c for t, c in schema.items() if not t.startswith(QUEUE_TABLES_PREFIX) and t not in NOT_DATA}
    unclassified = sorted(f"{t}.{c}" for t, cols in ours.items() for c in cols if c not in INVENTORY.get(t, {}))
    assert unclassified == [], f"classify these in agentbank/db/inventory.py: {unclassified}"
    gone = sorted(f"{t}.{c}" for t, cols in INVENTORY.items() for c in cols if c not in schema.get(t, {}))
    assert gone == [], f"no longer in the schema: {gone}"
    assert any(t.startswith(QUEUE_TABLES_PREFIX) for t in schema)  # the queue's tables are there, and named so


def test_whatever_is_sealed_is_ciphertext_bytes(db):
    schema = columns(db)
    sealed = [(t, c) for t, cols in INVENTORY.items() for c, kind in cols.items() if kind is Kind.SEALED]
    assert len(sealed) >= 12
    assert all(schema[t][c] == "bytea" for t, c in sealed), [(t, c, schema[t][c]) for t, c in sealed]


def test_no_column_holds_a_person_in_the_clear_under_an_old_name(db):
    """The names that held personal data in the clear before privacy by construction are gone for good."""
    schema = columns(db)
    for table, column in [("participants", "demographics"), ("population_answers", "code"),
                          ("report_cards", "accuracy"), ("memories", "embedding")]:  # fmt: skip
        assert column not in schema.get(table, {}), (table, column)
    for table in ("release_members", "release_counts", "item_validity"):
        assert table not in schema
