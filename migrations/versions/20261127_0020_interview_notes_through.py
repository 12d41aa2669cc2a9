"""Interviews remember up to which answer their notes on the person were taken: the notes are taken
after the reply, off the person's wait, and answers a crash left without notes are noted next time.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Interviews under way keep the notes they have; their earlier answers were noted with each reply.
    op.add_column("interview_sessions", sa.Column("notes_through", sa.Integer(), nullable=False, server_default="0"))
    op.execute(
        "UPDATE interview_sessions s SET notes_through = coalesce("
        "(SELECT max(t.position) FROM transcript_turns t WHERE t.transcript_id = s.transcript_id), 0)"
    )


def downgrade() -> None:
    op.drop_column("interview_sessions", "notes_through")
