"""Report cards: each agent's normalized accuracy per instrument, from evaluation runs.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "report_cards",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("agent_id", sa.Uuid(), nullable=False),
        sa.Column("instrument", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=120), nullable=False),
        sa.Column("condition", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("prompt_version", sa.String(length=64), nullable=False),
        sa.Column("items", sa.Integer(), nullable=False),
        sa.Column("accuracy", sa.Float(), nullable=False),
        sa.Column("self_consistency", sa.Float(), nullable=False),
        sa.Column("normalized_accuracy", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("agent_id", "instrument", "run_id", "condition"),
    )
    op.create_index("ix_report_cards_agent_id", "report_cards", ["agent_id"])


def downgrade() -> None:
    op.drop_index("ix_report_cards_agent_id", table_name="report_cards")
    op.drop_table("report_cards")
