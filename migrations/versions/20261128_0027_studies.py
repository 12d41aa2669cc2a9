"""Studies: cohorts of invitations with an expiry and a recruitment panel, and the counts an interview's
quality is read from.

``studies`` holds a coordinator's settings; an invitation may belong to one, expire or be revoked, and
once redeemed holds the panel's id for the person and the contact they left, both sealed with their key.
The interview keeps counts (answers, their words, follow-ups, poor audio) written with its turns, so a
study's quality is read without opening a transcript. Interviews begun before start at zero.

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COUNTS = ("answers_given", "answer_words", "follow_ups_asked", "audio_flags")


def upgrade() -> None:
    op.create_table(
        "studies",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("script_key", sa.String(length=64), nullable=False),
        sa.Column("script_version", sa.Integer(), nullable=False),
        sa.Column("target_size", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("panel", sa.String(length=32), nullable=False),
        sa.Column("panel_param", sa.String(length=64), nullable=True),
        sa.Column("completion_url", sa.String(length=500), nullable=True),
        sa.Column("retest_completion_url", sa.String(length=500), nullable=True),
        sa.Column("open_code_hash", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_studies")),
        sa.UniqueConstraint("name", name=op.f("uq_studies_name")),
        sa.UniqueConstraint("open_code_hash", name=op.f("uq_studies_open_code_hash")),
    )
    op.add_column("interview_invitations", sa.Column("study_id", sa.Uuid(), nullable=True))
    op.add_column("interview_invitations", sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("interview_invitations", sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("interview_invitations", sa.Column("panel_ref_encrypted", sa.LargeBinary(), nullable=True))
    op.add_column("interview_invitations", sa.Column("contact_encrypted", sa.LargeBinary(), nullable=True))
    op.add_column("interview_invitations", sa.Column("reminded_at", sa.DateTime(timezone=True), nullable=True))
    op.create_foreign_key(
        op.f("fk_interview_invitations_study_id_studies"), "interview_invitations", "studies", ["study_id"], ["id"]
    )
    op.create_index(op.f("ix_interview_invitations_study_id"), "interview_invitations", ["study_id"])
    for name in COUNTS:
        op.add_column("interview_sessions", sa.Column(name, sa.Integer(), server_default="0", nullable=False))


def downgrade() -> None:
    for name in COUNTS:
        op.drop_column("interview_sessions", name)
    op.drop_index(op.f("ix_interview_invitations_study_id"), table_name="interview_invitations")
    op.drop_constraint(op.f("fk_interview_invitations_study_id_studies"), "interview_invitations", type_="foreignkey")
    for name in ("reminded_at", "contact_encrypted", "panel_ref_encrypted", "revoked_at", "expires_at", "study_id"):
        op.drop_column("interview_invitations", name)
    op.drop_table("studies")
