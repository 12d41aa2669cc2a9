"""Privacy by construction: demographics, the agents' coded answers, report card scores and the
embeddings of interview passages sealed with each participant's data key; releases that keep protected
tables only (no row per person), with the privacy each cost; item validity published only inside a
release.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from migrations.backfills.seal_personal_data import (
    SCORE_COLUMNS,
    seal_demographics,
    seal_embeddings,
    seal_report_cards,
    sealed_population_answers,
)

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    connection = op.get_bind()
    op.add_column("participants", sa.Column("demographics_encrypted", sa.LargeBinary(), nullable=True))
    seal_demographics(connection)
    op.drop_column("participants", "demographics")

    sealed = sealed_population_answers(connection)
    op.drop_table("population_answers")
    table = op.create_table(
        "population_answers",
        sa.Column("agent_id", sa.Uuid(), nullable=False),
        sa.Column("instrument", sa.String(length=32), nullable=False),
        sa.Column("answers_encrypted", sa.LargeBinary(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_population_answers_agent_id_agents")),
        sa.PrimaryKeyConstraint("agent_id", "instrument", name=op.f("pk_population_answers")),
    )
    if sealed:
        op.bulk_insert(table, sealed)

    op.add_column("memories", sa.Column("embedding_encrypted", sa.LargeBinary(), nullable=True))
    seal_embeddings(connection)
    op.alter_column("memories", "embedding_encrypted", nullable=False)
    op.drop_column("memories", "embedding")

    op.add_column("report_cards", sa.Column("scores_encrypted", sa.LargeBinary(), nullable=True))
    seal_report_cards(connection)
    op.alter_column("report_cards", "scores_encrypted", nullable=False)
    for column in SCORE_COLUMNS:
        op.drop_column("report_cards", column)
    op.drop_table("item_validity")

    # Earlier releases held a row per person (their profile and answers, an unsalted digest of them):
    # they go whole, and the next cut makes the first protected release.
    op.drop_table("release_counts")
    op.drop_table("release_members")
    op.execute("DELETE FROM releases")
    op.drop_column("releases", "joined")
    op.drop_column("releases", "left")
    op.drop_column("release_tables", "created_at")
    op.add_column("releases", sa.Column("privacy", postgresql.JSONB(astext_type=sa.Text()), nullable=False))
    op.add_column("releases", sa.Column("mu", sa.Float(), nullable=False))
    op.add_column("releases", sa.Column("state_digest", sa.String(length=64), nullable=False))
    op.create_table(
        "release_validity",
        sa.Column("release_id", sa.Integer(), nullable=False),
        sa.Column("instrument", sa.String(length=32), nullable=False),
        sa.Column("item", sa.String(length=64), nullable=False),
        sa.Column("scored", sa.Integer(), nullable=False),
        sa.Column("right", sa.Integer(), nullable=False),
        sa.Column("repeated", sa.Integer(), nullable=False),
        sa.Column("baseline_right", sa.Integer(), nullable=True),
        sa.Column("baseline", sa.String(length=32), nullable=True),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("run_id", sa.String(length=120), nullable=False),
        sa.Column("measured_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["release_id"], ["releases.id"], name=op.f("fk_release_validity_release_id_releases"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("release_id", "instrument", "item", name=op.f("pk_release_validity")),
    )


def downgrade() -> None:
    # Sealed data cannot be unsealed by a schema change, and the plaintext columns must not come back.
    raise NotImplementedError("0021 seals personal data for good; restore a backup taken before it instead")
