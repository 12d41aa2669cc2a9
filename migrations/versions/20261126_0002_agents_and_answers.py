"""Participants, encrypted transcripts (immutable once final), agents with memories, instruments, answers.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "instruments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key", sa.String(length=32), nullable=False),
        sa.Column("version", sa.String(length=16), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("preamble", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_instruments")),
        sa.UniqueConstraint("key", "version", name=op.f("uq_instruments_key")),
    )
    op.create_table(
        "participants",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("pseudonym", sa.String(length=64), nullable=False),
        sa.Column("source_ref", sa.String(length=300), nullable=False),
        sa.Column("demographics", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("consent", sa.String(length=16), nullable=False),
        sa.Column("wrapped_key", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_participants")),
        sa.UniqueConstraint("pseudonym", name=op.f("uq_participants_pseudonym")),
        sa.UniqueConstraint("source_ref", name=op.f("uq_participants_source_ref")),
    )
    op.create_table(
        "items",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("instrument_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("version", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("options", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("minimum", sa.Float(), nullable=True),
        sa.Column("maximum", sa.Float(), nullable=True),
        sa.Column("meta", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.ForeignKeyConstraint(["instrument_id"], ["instruments.id"], name=op.f("fk_items_instrument_id_instruments")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_items")),
        sa.UniqueConstraint("instrument_id", "key", name=op.f("uq_items_instrument_id")),
    )
    op.create_table(
        "transcripts",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("participant_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("finalized_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["participant_id"], ["participants.id"], name=op.f("fk_transcripts_participant_id_participants")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_transcripts")),
        sa.UniqueConstraint("participant_id", "version", name=op.f("uq_transcripts_participant_id")),
    )
    op.create_index(op.f("ix_transcripts_participant_id"), "transcripts", ["participant_id"], unique=False)
    op.create_table(
        "agents",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("participant_id", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("transcript_id", sa.Uuid(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("build", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("persona_encrypted", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["participant_id"], ["participants.id"], name=op.f("fk_agents_participant_id_participants")
        ),
        sa.ForeignKeyConstraint(
            ["transcript_id"], ["transcripts.id"], name=op.f("fk_agents_transcript_id_transcripts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agents")),
        sa.UniqueConstraint("participant_id", "version", name=op.f("uq_agents_participant_id")),
    )
    op.create_index(op.f("ix_agents_participant_id"), "agents", ["participant_id"], unique=False)
    op.create_table(
        "transcript_turns",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("transcript_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("speaker", sa.String(length=16), nullable=False),
        sa.Column("text_encrypted", sa.LargeBinary(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["transcript_id"], ["transcripts.id"], name=op.f("fk_transcript_turns_transcript_id_transcripts")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_transcript_turns")),
        sa.UniqueConstraint("transcript_id", "position", name=op.f("uq_transcript_turns_transcript_id")),
    )
    op.create_table(
        "answers",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("cache_key", sa.String(length=64), nullable=False),
        sa.Column("agent_id", sa.Uuid(), nullable=False),
        sa.Column("agent_version", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=True),
        sa.Column("item_version", sa.String(length=16), nullable=True),
        sa.Column("question_sha256", sa.String(length=64), nullable=True),
        sa.Column("condition", sa.String(length=16), nullable=False),
        sa.Column("condition_params", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("prompt_version", sa.String(length=32), nullable=False),
        sa.Column("sampling", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=True),
        sa.Column("payload_encrypted", sa.LargeBinary(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("cached_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_answers_agent_id_agents")),
        sa.ForeignKeyConstraint(["item_id"], ["items.id"], name=op.f("fk_answers_item_id_items")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_answers")),
        sa.UniqueConstraint("cache_key", name=op.f("uq_answers_cache_key")),
    )
    op.create_index(op.f("ix_answers_agent_id"), "answers", ["agent_id"], unique=False)
    op.create_table(
        "memories",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("agent_id", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("expert", sa.String(length=32), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("first_turn", sa.Integer(), nullable=True),
        sa.Column("last_turn", sa.Integer(), nullable=True),
        sa.Column("word_count", sa.Integer(), nullable=False),
        sa.Column("text_encrypted", sa.LargeBinary(), nullable=False),
        sa.Column("embedding", Vector(), nullable=False),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_memories_agent_id_agents")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memories")),
    )
    op.create_index("ix_memories_agent_kind", "memories", ["agent_id", "kind"], unique=False)
    op.execute(FREEZE_FINAL_TRANSCRIPTS)


# A final transcript is the record an agent was built from: neither it nor its turns may change.
FREEZE_FINAL_TRANSCRIPTS = """
CREATE FUNCTION forbid_final_turn_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    target uuid := CASE WHEN TG_OP = 'DELETE' THEN OLD.transcript_id ELSE NEW.transcript_id END;
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.transcript_id <> NEW.transcript_id THEN
        target := OLD.transcript_id;
    END IF;
    IF EXISTS (SELECT 1 FROM transcripts WHERE id = target AND status = 'final') THEN
        RAISE EXCEPTION 'transcript % is final and cannot change', target
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
CREATE TRIGGER transcript_turns_frozen BEFORE INSERT OR UPDATE OR DELETE ON transcript_turns
    FOR EACH ROW EXECUTE FUNCTION forbid_final_turn_change();

CREATE FUNCTION forbid_final_transcript_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status = 'final' THEN
        RAISE EXCEPTION 'transcript % is final and cannot change', OLD.id
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
CREATE TRIGGER transcripts_frozen BEFORE UPDATE OR DELETE ON transcripts
    FOR EACH ROW EXECUTE FUNCTION forbid_final_transcript_change();
"""


def downgrade() -> None:
    op.execute("DROP TRIGGER transcripts_frozen ON transcripts")
    op.execute("DROP TRIGGER transcript_turns_frozen ON transcript_turns")
    op.execute("DROP FUNCTION forbid_final_transcript_change()")
    op.execute("DROP FUNCTION forbid_final_turn_change()")
    op.drop_index("ix_memories_agent_kind", table_name="memories")
    op.drop_table("memories")
    op.drop_index(op.f("ix_answers_agent_id"), table_name="answers")
    op.drop_table("answers")
    op.drop_table("transcript_turns")
    op.drop_index(op.f("ix_agents_participant_id"), table_name="agents")
    op.drop_table("agents")
    op.drop_index(op.f("ix_transcripts_participant_id"), table_name="transcripts")
    op.drop_table("transcripts")
    op.drop_table("items")
    op.drop_table("participants")
    op.drop_table("instruments")
