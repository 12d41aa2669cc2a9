"""Focus groups: a project's moderated group of its agents, its seats, and one row per utterance as it is made.

An utterance row names the answers the door stored for an agent's words (sealed with the participant's key,
deleted on withdrawal), never the words; a moderator's row holds the guide's wording and seat labels only.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = postgresql.JSONB(astext_type=sa.Text())


def upgrade() -> None:
    op.create_table(
        "focus_groups",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("project_id", sa.Uuid(), nullable=False),
        sa.Column("client_pk", sa.Uuid(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("request", JSON, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=True),
        sa.Column("reason", sa.String(length=200), nullable=True),
        sa.Column("estimate", JSON, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], name=op.f("fk_focus_groups_project_id_projects")),
        sa.ForeignKeyConstraint(["client_pk"], ["clients.id"], name=op.f("fk_focus_groups_client_pk_clients")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_focus_groups")),
        sa.UniqueConstraint("client_pk", "idempotency_key", name=op.f("uq_focus_groups_client_pk")),
    )
    op.create_index(op.f("ix_focus_groups_project_id"), "focus_groups", ["project_id"])
    op.create_table(
        "focus_group_seats",
        sa.Column("group_id", sa.Uuid(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.Uuid(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("removed_at", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["group_id"], ["focus_groups.id"], name=op.f("fk_focus_group_seats_group_id_focus_groups")
        ),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_focus_group_seats_agent_id_agents")),
        sa.PrimaryKeyConstraint("group_id", "seat", name=op.f("pk_focus_group_seats")),
    )
    op.create_index(op.f("ix_focus_group_seats_agent_id"), "focus_group_seats", ["agent_id"])
    op.create_table(
        "focus_group_utterances",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("group_id", sa.Uuid(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("agent_id", sa.Uuid(), nullable=True),
        sa.Column("action", sa.String(length=16), nullable=True),
        sa.Column("guide_ref", sa.String(length=16), nullable=True),
        sa.Column("about", sa.Integer(), nullable=True),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("answer_ids", JSON, nullable=False),
        sa.Column("reasons", JSON, nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("cached_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["group_id"], ["focus_groups.id"], name=op.f("fk_focus_group_utterances_group_id_focus_groups")
        ),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_focus_group_utterances_agent_id_agents")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_focus_group_utterances")),
        sa.UniqueConstraint("group_id", "number", name=op.f("uq_focus_group_utterances_group_id")),
    )
    op.create_index(op.f("ix_focus_group_utterances_agent_id"), "focus_group_utterances", ["agent_id"])


def downgrade() -> None:
    op.drop_table("focus_group_utterances")
    op.drop_table("focus_group_seats")
    op.drop_table("focus_groups")
