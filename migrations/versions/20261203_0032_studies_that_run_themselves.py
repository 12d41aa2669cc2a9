"""Studies that run themselves: per-participant completion codes, the panel's outcomes, failed reminders.

A study may give each participant their own completion code (``completion_codes``): it is derived when they
reach an end, under their data key, so no code is stored. An invitation keeps what the panel reported of a
person who did not complete there (``panel_outcome``: returned, timed out) and when the last attempt to
send the retest's reminder failed (``reminder_failed_at``: it is tried again). Nothing here is anybody's data.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "studies", sa.Column("completion_codes", sa.String(length=16), server_default="panel", nullable=False)
    )
    op.add_column("interview_invitations", sa.Column("reminder_failed_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("interview_invitations", sa.Column("panel_outcome", sa.String(length=16), nullable=True))
    op.add_column("interview_invitations", sa.Column("panel_outcome_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("interview_invitations", "panel_outcome_at")
    op.drop_column("interview_invitations", "panel_outcome")
    op.drop_column("interview_invitations", "reminder_failed_at")
    op.drop_column("studies", "completion_codes")
