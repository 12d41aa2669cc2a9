"""Releases name the breakdowns their profiles hold (five were added: Hispanic origin, marital status,
labour-force status, subjective class, health) and keep the post-stratification weights raked for them.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The breakdowns every release cut before this revision holds, in its profiles' order.
EARLIER = '["sex", "age_band", "race", "education", "region", "party", "ideology"]'


def upgrade() -> None:
    op.add_column(
        "releases",
        sa.Column("dimensions", postgresql.JSONB(), nullable=False, server_default=sa.text(f"'{EARLIER}'::jsonb")),
    )
    op.alter_column("releases", "dimensions", server_default=None)
    op.add_column("releases", sa.Column("weights", postgresql.JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("releases", "weights")
    op.drop_column("releases", "dimensions")
