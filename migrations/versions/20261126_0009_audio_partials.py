"""Audio partials: text transcribed from the start of a spoken answer while it is being recorded.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audio_partials",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("session_id", sa.Uuid(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("start_sample", sa.Integer(), nullable=False),
        sa.Column("end_sample", sa.Integer(), nullable=False),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("chunks_sha256", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=100), nullable=False),
        sa.Column("text_encrypted", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"], ["interview_sessions.id"], name=op.f("fk_audio_partials_session_id_interview_sessions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audio_partials")),
        sa.UniqueConstraint("session_id", "turn", "start_sample", name=op.f("uq_audio_partials_session_id")),
    )


def downgrade() -> None:
    op.drop_table("audio_partials")
