"""The interview's position records that the interviewer has told the person back what it heard in a module
and waits for their answer to it.

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "interview_sessions", sa.Column("reflecting", sa.Boolean(), server_default=sa.false(), nullable=False)
    )


def downgrade() -> None:
    op.drop_column("interview_sessions", "reflecting")
