"""Estimates before a job runs, the answers a job made, and instruments a project brings of its own.

``job_estimates`` keeps each dry run's figures; a job submitted with the same request copies the newest
into ``jobs.estimate``; ``job_results.made_ids`` names the answers the model made for the job (the rest
came from the answer cache), so what a job used stands beside its estimate. ``team_instruments`` holds a
project's own closed questions, one row per version: a version once written is what a reviewer approves,
so the application role may add versions and never change or remove one.

Revision ID: 0026
Revises: 0024
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0026"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INSERT_ONLY = """
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agentbank_app') THEN
        GRANT SELECT, INSERT ON team_instruments TO agentbank_app;
        REVOKE UPDATE, DELETE, TRUNCATE ON team_instruments FROM agentbank_app;
    END IF;
END $$;
"""


def upgrade() -> None:
    op.create_table(
        "job_estimates",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("figures", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=op.f("fk_job_estimates_project_id_projects")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_estimates")),
    )
    op.create_index(op.f("ix_job_estimates_project_id"), "job_estimates", ["project_id"])
    op.add_column("jobs", sa.Column("estimate", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.add_column(
        "job_results",
        sa.Column("made_ids", postgresql.JSONB(astext_type=sa.Text()), server_default="[]", nullable=False),
    )
    op.create_table(
        "team_instruments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=24), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("definition", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=8), nullable=False),
        sa.Column("not_imported", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=op.f("fk_team_instruments_project_id_projects")),
        sa.ForeignKeyConstraint(["created_by"], ["clients.id"], name=op.f("fk_team_instruments_created_by_clients")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_team_instruments")),
        sa.UniqueConstraint("project_id", "key", "version", name=op.f("uq_team_instruments_project_id")),
    )
    op.execute(INSERT_ONLY)


def downgrade() -> None:
    op.drop_table("team_instruments")
    op.drop_column("job_results", "made_ids")
    op.drop_column("jobs", "estimate")
    op.drop_index(op.f("ix_job_estimates_project_id"), table_name="job_estimates")
    op.drop_table("job_estimates")
