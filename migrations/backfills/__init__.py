"""Data backfills that migrations run, kept apart from the schema changes that call them."""
