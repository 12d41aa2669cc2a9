"""OAuth2 clients and hashed tokens, projects and reviews, jobs with per-agent results, population answers.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "clients",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("secret_hash", sa.LargeBinary(), nullable=False),
        sa.Column("scopes", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_clients")),
        sa.UniqueConstraint("client_id", name=op.f("uq_clients_client_id")),
    )
    op.create_table(
        "access_tokens",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("client_pk", sa.Uuid(), nullable=True),
        sa.Column("participant_id", sa.Uuid(), nullable=True),
        sa.Column("scopes", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["client_pk"], ["clients.id"], name=op.f("fk_access_tokens_client_pk_clients")),
        sa.ForeignKeyConstraint(
            ["participant_id"], ["participants.id"], name=op.f("fk_access_tokens_participant_id_participants")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_access_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_access_tokens_token_hash")),
    )
    op.create_index(op.f("ix_access_tokens_client_pk"), "access_tokens", ["client_pk"], unique=False)
    op.create_index(op.f("ix_access_tokens_participant_id"), "access_tokens", ["participant_id"], unique=False)
    op.create_table(
        "projects",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("purpose", sa.Text(), nullable=False),
        sa.Column("harms", sa.Text(), nullable=False),
        sa.Column("pi_pk", sa.Uuid(), nullable=False),
        sa.Column("requested", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("scope", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("quota_used", sa.Integer(), nullable=False),
        sa.Column("decided_by", sa.Uuid(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("decision_note", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["decided_by"], ["clients.id"], name=op.f("fk_projects_decided_by_clients")),
        sa.ForeignKeyConstraint(["pi_pk"], ["clients.id"], name=op.f("fk_projects_pi_pk_clients")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("client_pk", sa.Uuid(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("request", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["client_pk"], ["clients.id"], name=op.f("fk_jobs_client_pk_clients")),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=op.f("fk_jobs_project_id_projects")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
        sa.UniqueConstraint("client_pk", "idempotency_key", name=op.f("uq_jobs_client_pk")),
    )
    op.create_index(op.f("ix_jobs_project_id"), "jobs", ["project_id"], unique=False)
    op.create_table(
        "project_members",
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("client_pk", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(["client_pk"], ["clients.id"], name=op.f("fk_project_members_client_pk_clients")),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=op.f("fk_project_members_project_id_projects")),
        sa.PrimaryKeyConstraint("project_id", "client_pk", name=op.f("pk_project_members")),
    )
    op.create_table(
        "job_results",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("agent_id", sa.Uuid(), nullable=False),
        sa.Column("answer_ids", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_job_results_agent_id_agents")),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_job_results_job_id_jobs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_results")),
        sa.UniqueConstraint("job_id", "agent_id", name=op.f("uq_job_results_job_id")),
    )
    op.create_table(
        "population_answers",
        sa.Column("agent_id", sa.Uuid(), nullable=False),
        sa.Column("instrument", sa.String(length=32), nullable=False),
        sa.Column("item", sa.String(length=64), nullable=False),
        sa.Column("code", sa.Integer(), nullable=True),
        sa.Column("value", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_population_answers_agent_id_agents")),
        sa.PrimaryKeyConstraint("agent_id", "instrument", "item", name=op.f("pk_population_answers")),
    )
    op.create_index("ix_population_answers_item", "population_answers", ["instrument", "item"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_population_answers_item", table_name="population_answers")
    op.drop_table("population_answers")
    op.drop_table("job_results")
    op.drop_table("project_members")
    op.drop_index(op.f("ix_jobs_project_id"), table_name="jobs")
    op.drop_table("jobs")
    op.drop_table("projects")
    op.drop_index(op.f("ix_access_tokens_participant_id"), table_name="access_tokens")
    op.drop_index(op.f("ix_access_tokens_client_pk"), table_name="access_tokens")
    op.drop_table("access_tokens")
    op.drop_table("clients")
