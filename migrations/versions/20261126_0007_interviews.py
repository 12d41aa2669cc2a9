"""Interviews in progress: invitations, sessions with their position, and uploaded audio chunks.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "interview_sessions",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("participant_id", sa.Uuid(), nullable=False),
        sa.Column("transcript_id", sa.Uuid(), nullable=False),
        sa.Column("script_key", sa.String(length=64), nullable=False),
        sa.Column("script_version", sa.Integer(), nullable=False),
        sa.Column("script_fingerprint", sa.String(length=64), nullable=False),
        sa.Column("script", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("consent", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("consented_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("question_index", sa.Integer(), nullable=False),
        sa.Column("follow_ups", sa.Integer(), nullable=False),
        sa.Column("seconds_used", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("notes_encrypted", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["participant_id"], ["participants.id"], name=op.f("fk_interview_sessions_participant_id_participants")
        ),
        sa.ForeignKeyConstraint(
            ["transcript_id"], ["transcripts.id"], name=op.f("fk_interview_sessions_transcript_id_transcripts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_interview_sessions")),
    )
    op.create_index(
        op.f("ix_interview_sessions_participant_id"), "interview_sessions", ["participant_id"], unique=False
    )
    op.create_table(
        "audio_chunks",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("session_id", sa.Uuid(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data_encrypted", sa.LargeBinary(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("bytes", sa.Integer(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"], ["interview_sessions.id"], name=op.f("fk_audio_chunks_session_id_interview_sessions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audio_chunks")),
        sa.UniqueConstraint("session_id", "turn", "seq", name=op.f("uq_audio_chunks_session_id")),
    )
    op.create_table(
        "interview_invitations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("session_id", sa.Uuid(), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["interview_sessions.id"],
            name=op.f("fk_interview_invitations_session_id_interview_sessions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_interview_invitations")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_interview_invitations_code_hash")),
    )


def downgrade() -> None:
    op.drop_table("interview_invitations")
    op.drop_table("audio_chunks")
    op.drop_index(op.f("ix_interview_sessions_participant_id"), table_name="interview_sessions")
    op.drop_table("interview_sessions")
