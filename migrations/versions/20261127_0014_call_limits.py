"""Call limits: requests and tokens per minute of each model endpoint, shared by every process.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "call_limits",
        sa.Column("key", sa.String(300), nullable=False),
        sa.Column("tat", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_call_limits")),
    )


def downgrade() -> None:
    op.drop_table("call_limits")
