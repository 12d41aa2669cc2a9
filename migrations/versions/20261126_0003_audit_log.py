"""Append-only audit log with signed checkpoints, and the application role that cannot rewrite it.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = """
CREATE FUNCTION forbid_audit_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION forbid_audit_rewrite();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION forbid_audit_rewrite();
CREATE TRIGGER audit_checkpoints_append_only BEFORE UPDATE OR DELETE ON audit_checkpoints
    FOR EACH ROW EXECUTE FUNCTION forbid_audit_rewrite();
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION forbid_audit_rewrite();
"""

# The role the application connects as in production: full use of its tables, but only SELECT and
# INSERT on the audit tables. Creating roles needs CREATEROLE; where the migrating user lacks it, a
# database administrator creates the role with these grants instead.
APP_ROLE = """
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agentbank_app') THEN
        CREATE ROLE agentbank_app NOLOGIN;
    END IF;
    GRANT USAGE ON SCHEMA public TO agentbank_app;
    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO agentbank_app;
    GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO agentbank_app;
    REVOKE UPDATE, DELETE, TRUNCATE ON audit_events, audit_checkpoints FROM agentbank_app;
    ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO agentbank_app;
    ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO agentbank_app;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'not allowed to create the agentbank_app role; create it as described in deploy/';
END $$;
"""


def upgrade() -> None:
    op.create_table(
        "audit_events",
        sa.Column("seq", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor_kind", sa.String(length=16), nullable=False),
        sa.Column("actor_id", sa.String(length=100), nullable=False),
        sa.Column("action", sa.String(length=48), nullable=False),
        sa.Column("tier", sa.String(length=16), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=True),
        sa.Column("agent_id", sa.Uuid(), nullable=True),
        sa.Column("participant_id", sa.Uuid(), nullable=True),
        sa.Column("details", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("prev_hash", sa.LargeBinary(), nullable=False),
        sa.Column("hash", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_audit_events")),
    )
    op.create_index("ix_audit_events_participant", "audit_events", ["participant_id", "seq"], unique=False)
    op.create_table(
        "audit_checkpoints",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("head_hash", sa.LargeBinary(), nullable=False),
        sa.Column("signed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("key_id", sa.String(length=32), nullable=False),
        sa.Column("signature", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_checkpoints")),
    )
    op.execute(APPEND_ONLY)
    op.execute(APP_ROLE)


def downgrade() -> None:
    op.drop_table("audit_checkpoints")
    op.drop_table("audit_events")
    op.execute("DROP FUNCTION forbid_audit_rewrite()")
