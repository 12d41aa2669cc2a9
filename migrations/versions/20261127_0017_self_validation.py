"""The self-validating bank: the participant's battery (their own survey answers in two waves, sealed
with their data key), report cards with their interval and the best baseline, and each item's measured
validity for the open tier.

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
    op.add_column("report_cards", sa.Column("normalized_low", sa.Float(), nullable=True))
    op.add_column("report_cards", sa.Column("normalized_high", sa.Float(), nullable=True))
    op.add_column("report_cards", sa.Column("baseline", sa.String(length=32), nullable=True))
    op.add_column("report_cards", sa.Column("baseline_normalized", sa.Float(), nullable=True))
    op.create_table(
        "item_validity",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("instrument", sa.String(length=64), nullable=False),
        sa.Column("item", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=120), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("agents", sa.Integer(), nullable=False),
        sa.Column("accuracy", sa.Float(), nullable=False),
        sa.Column("retest", sa.Float(), nullable=False),
        sa.Column("normalized_accuracy", sa.Float(), nullable=True),
        sa.Column("baseline", sa.String(length=32), nullable=True),
        sa.Column("baseline_accuracy", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_item_validity")),
        sa.UniqueConstraint("instrument", "item", "run_id", name=op.f("uq_item_validity_instrument")),
    )


def downgrade() -> None:
    op.drop_table("item_validity")
    for column in ("baseline_normalized", "baseline", "normalized_high", "normalized_low"):
        op.drop_column("report_cards", column)
    op.drop_index(op.f("ix_battery_answers_participant_id"), table_name="battery_answers")
    op.drop_table("battery_answers")
    op.drop_table("battery_waves")
