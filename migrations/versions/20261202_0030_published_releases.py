"""Releases as publications: the tables researchers ask for, an access log of reads, and word of a change
to tokens and clients for the processes that keep live tokens in memory.

- ``releases.manifest_sha256``: the digest of a release's signed manifest once its files are published.
- ``table_requests``: a table a release lacked, measured at the next cut and kept in the workload after.
- ``open_reads``: reads of published tables per client and day, added in batches (a read opens no
  transaction of its own).
- A statement trigger on ``access_tokens`` and ``clients`` notifies ``agentbank_access`` on every change, so
  an API process that keeps a token's principal in memory drops it when the change commits, whoever made it
  (an API request, the command line, another process): no code path can revoke a token and forget to say so.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOTIFY = """
CREATE FUNCTION agentbank_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agentbank_access', TG_TABLE_NAME);
    RETURN NULL;
END $$;
"""


def upgrade() -> None:
    op.add_column("releases", sa.Column("manifest_sha256", sa.String(64), nullable=True))
    op.create_table(
        "table_requests",
        sa.Column("instrument", sa.String(32), nullable=False),
        sa.Column("item", sa.String(64), nullable=False),
        sa.Column("breakdowns", sa.String(80), nullable=False),
        sa.Column("first_asked_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("last_asked_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("asks", sa.Integer(), nullable=False),
        sa.Column("first_release", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("instrument", "item", "breakdowns", name=op.f("pk_table_requests")),
    )
    op.create_table(
        "open_reads",
        sa.Column("client_id", sa.String(100), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("reads", sa.BigInteger(), nullable=False),
        sa.Column("not_modified", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("client_id", "day", name=op.f("pk_open_reads")),
    )
    op.execute(NOTIFY)
    for table in ("access_tokens", "clients"):
        op.execute(
            f"CREATE TRIGGER {table}_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION agentbank_access_changed()"
        )


def downgrade() -> None:
    for table in ("access_tokens", "clients"):
        op.execute(f"DROP TRIGGER {table}_changed ON {table}")
    op.execute("DROP FUNCTION agentbank_access_changed()")
    op.drop_table("open_reads")
    op.drop_table("table_requests")
    op.drop_column("releases", "manifest_sha256")
