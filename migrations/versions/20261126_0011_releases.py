"""Releases of the open tier: frozen populations, their counts by demographic cell, and protected tables.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "releases",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("cut_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("agents", sa.Integer(), nullable=False),
        sa.Column("joined", sa.Integer(), nullable=False),
        sa.Column("left", sa.Integer(), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("cut_by", sa.String(length=100), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_releases")),
    )
    op.create_table(
        "release_members",
        sa.Column("release_id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Uuid(), nullable=False),
        sa.Column("answers_digest", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["release_id"], ["releases.id"], name=op.f("fk_release_members_release_id_releases"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_release_members_agent_id_agents")),
        sa.PrimaryKeyConstraint("release_id", "agent_id", name=op.f("pk_release_members")),
    )
    op.create_table(
        "release_counts",
        sa.Column("release_id", sa.Integer(), nullable=False),
        sa.Column("instrument", sa.String(length=32), nullable=False),
        sa.Column("item", sa.String(length=64), nullable=False),
        sa.Column("cell", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("code", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["release_id"], ["releases.id"], name=op.f("fk_release_counts_release_id_releases"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("release_id", "instrument", "item", "cell", "code", name=op.f("pk_release_counts")),
    )
    op.create_table(
        "release_tables",
        sa.Column("release_id", sa.Integer(), nullable=False),
        sa.Column("instrument", sa.String(length=32), nullable=False),
        sa.Column("item", sa.String(length=64), nullable=False),
        sa.Column("breakdowns", sa.String(length=80), nullable=False),
        sa.Column("released", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["release_id"], ["releases.id"], name=op.f("fk_release_tables_release_id_releases"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("release_id", "instrument", "item", "breakdowns", name=op.f("pk_release_tables")),
    )


def downgrade() -> None:
    for table in ("release_tables", "release_counts", "release_members", "releases"):
        op.drop_table(table)
