"""A project's named members accept before the project is submitted: each membership records when.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("project_members", sa.Column("accepted_at", sa.DateTime(timezone=True), nullable=True))
    # Memberships of projects already submitted or decided stand as they were: accepted when their project began.
    op.execute("UPDATE project_members m SET accepted_at = p.created_at FROM projects p WHERE p.id = m.project_id")


def downgrade() -> None:
    # Without acceptance, a name alone made a member: the invitations still open are dropped instead.
    op.execute("DELETE FROM project_members WHERE accepted_at IS NULL")
    op.execute("UPDATE projects SET status = 'submitted' WHERE status = 'forming'")
    op.drop_column("project_members", "accepted_at")
