"""The audit log's Merkle tree: its stored subtrees, signed tree heads as C2SP checkpoints, and the
witnesses' cosignatures of them.

``audit_tree_nodes`` holds the perfect subtrees of 256 leaves and up (the sequencer fills it, from the
chain, the first time it runs after this upgrade); ``audit_checkpoints.note`` the head as a signed note
(null on checkpoints signed before); ``audit_cosignatures`` what each witness answered. All three are
evidence, so the application role may add rows and never change or remove one, like the log itself.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = """
CREATE TRIGGER audit_tree_nodes_append_only BEFORE UPDATE OR DELETE ON audit_tree_nodes
    FOR EACH ROW EXECUTE FUNCTION forbid_audit_rewrite();
CREATE TRIGGER audit_tree_nodes_no_truncate BEFORE TRUNCATE ON audit_tree_nodes
    FOR EACH STATEMENT EXECUTE FUNCTION forbid_audit_rewrite();
CREATE TRIGGER audit_cosignatures_append_only BEFORE UPDATE OR DELETE ON audit_cosignatures
    FOR EACH ROW EXECUTE FUNCTION forbid_audit_rewrite();
CREATE TRIGGER audit_cosignatures_no_truncate BEFORE TRUNCATE ON audit_cosignatures
    FOR EACH STATEMENT EXECUTE FUNCTION forbid_audit_rewrite();
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agentbank_app') THEN
        GRANT SELECT, INSERT ON audit_tree_nodes, audit_cosignatures TO agentbank_app;
        REVOKE UPDATE, DELETE, TRUNCATE ON audit_tree_nodes, audit_cosignatures FROM agentbank_app;
    END IF;
END $$;
"""


def upgrade() -> None:
    op.add_column("audit_checkpoints", sa.Column("note", sa.Text(), nullable=True))
    op.create_table(
        "audit_tree_nodes",
        sa.Column("level", sa.SmallInteger(), nullable=False),
        sa.Column("idx", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("level", "idx", name=op.f("pk_audit_tree_nodes")),
    )
    op.create_table(
        "audit_cosignatures",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("checkpoint_id", sa.Integer(), nullable=False),
        sa.Column("witness", sa.String(length=200), nullable=False),
        sa.Column("line", sa.Text(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_cosignatures")),
        sa.UniqueConstraint("checkpoint_id", "witness", name=op.f("uq_audit_cosignatures_checkpoint_id")),
    )
    op.execute(APPEND_ONLY)


def downgrade() -> None:
    op.drop_table("audit_cosignatures")
    op.drop_table("audit_tree_nodes")
    # Adding or dropping a column is no UPDATE: the append-only trigger does not stand in the way.
    op.drop_column("audit_checkpoints", "note")
