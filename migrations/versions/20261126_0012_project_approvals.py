"""Reviewers' approvals of projects, one row each, so a setting can require two to agree.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# An approval once given is evidence of who agreed to what: the application role may add one, never
# change or remove it (the default privileges of 0003 would grant both). Skipped where the role does
# not exist (a server whose administrator creates it later grants as deploy/ says).
INSERT_ONLY = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agentbank_app') THEN
        GRANT SELECT, INSERT ON project_approvals TO agentbank_app;
        REVOKE UPDATE, DELETE, TRUNCATE ON project_approvals FROM agentbank_app;
    END IF;
END $$;
"""


def upgrade() -> None:
    op.create_table(
        "project_approvals",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("reviewer_pk", sa.Uuid(), nullable=False),
        sa.Column("scope", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("approved_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=op.f("fk_project_approvals_project_id_projects")),
        sa.ForeignKeyConstraint(["reviewer_pk"], ["clients.id"], name=op.f("fk_project_approvals_reviewer_pk_clients")),
        sa.PrimaryKeyConstraint("project_id", "reviewer_pk", name=op.f("pk_project_approvals")),
    )
    op.execute(INSERT_ONLY)


def downgrade() -> None:
    op.drop_table("project_approvals")
