"""Recording takes: the interview names which recording of the current answer its chunks belong to.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("interview_sessions", sa.Column("audio_take", sa.Integer(), server_default="0", nullable=False))


def downgrade() -> None:
    op.drop_column("interview_sessions", "audio_take")
