"""The participant's battery: their own survey answers in two waves, sealed with their data key.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "battery_waves",
        sa.Column("participant_id", sa.Uuid(), nullable=False),
        sa.Column("wave", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["participant_id"], ["participants.id"], name=op.f("fk_battery_waves_participant_id_participants")
        ),
        sa.PrimaryKeyConstraint("participant_id", "wave", name=op.f("pk_battery_waves")),
    )
    op.create_table(
        "battery_answers",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("participant_id", sa.Uuid(), nullable=False),
        sa.Column("wave", sa.Integer(), nullable=False),
        sa.Column("item", sa.String(length=80), nullable=False),
        sa.Column("answer_encrypted", sa.LargeBinary(), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["participant_id"], ["participants.id"], name=op.f("fk_battery_answers_participant_id_participants")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_battery_answers")),
        sa.UniqueConstraint("participant_id", "wave", "item", name=op.f("uq_battery_answers_participant_id")),
    )
    op.create_index(op.f("ix_battery_answers_participant_id"), "battery_answers", ["participant_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_battery_answers_participant_id"), table_name="battery_answers")
    op.drop_table("battery_answers")
    op.drop_table("battery_waves")
