"""Participant protection: agents' sealed deny-lists, the queue of withheld answers, the outbox.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("agents", sa.Column("deny_list_encrypted", sa.LargeBinary(), nullable=True))
    op.create_table(
        "withheld_answers",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("job_result_id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("agent_id", sa.Uuid(), nullable=False),
        sa.Column("answer_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("reasons", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("decided_by", sa.String(length=100), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_result_id"], ["job_results.id"], name=op.f("fk_withheld_answers_job_result_id_job_results")
        ),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_withheld_answers_job_id_jobs")),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=op.f("fk_withheld_answers_project_id_projects")),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_withheld_answers_agent_id_agents")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_withheld_answers")),
    )
    op.create_index(op.f("ix_withheld_answers_job_result_id"), "withheld_answers", ["job_result_id"])
    op.create_index(op.f("ix_withheld_answers_agent_id"), "withheld_answers", ["agent_id"])
    op.create_index("ix_withheld_answers_status", "withheld_answers", ["status", "id"])
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("topic", sa.String(length=64), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=True),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=op.f("fk_outbox_project_id_projects")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
    )
    op.create_index("ix_outbox_undelivered", "outbox", ["delivered_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_outbox_undelivered", table_name="outbox")
    op.drop_table("outbox")
    op.drop_index("ix_withheld_answers_status", table_name="withheld_answers")
    op.drop_index(op.f("ix_withheld_answers_agent_id"), table_name="withheld_answers")
    op.drop_index(op.f("ix_withheld_answers_job_result_id"), table_name="withheld_answers")
    op.drop_table("withheld_answers")
    op.drop_column("agents", "deny_list_encrypted")
