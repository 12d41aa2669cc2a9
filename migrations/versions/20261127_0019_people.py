"""People who sign in to the consoles through an OpenID Connect provider, each linked to an API client's
principal, and their console sessions among the access tokens.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "people",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("client_pk", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["client_pk"], ["clients.id"], name=op.f("fk_people_client_pk_clients")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_people")),
        sa.UniqueConstraint("email", name=op.f("uq_people_email")),
    )
    op.create_index(op.f("ix_people_client_pk"), "people", ["client_pk"], unique=False)
    op.add_column("access_tokens", sa.Column("person_id", sa.Uuid(), nullable=True))
    op.create_index(op.f("ix_access_tokens_person_id"), "access_tokens", ["person_id"], unique=False)
    op.create_foreign_key(op.f("fk_access_tokens_person_id_people"), "access_tokens", "people", ["person_id"], ["id"])


def downgrade() -> None:
    op.drop_constraint(op.f("fk_access_tokens_person_id_people"), "access_tokens", type_="foreignkey")
    op.drop_index(op.f("ix_access_tokens_person_id"), table_name="access_tokens")
    op.drop_column("access_tokens", "person_id")
    op.drop_index(op.f("ix_people_client_pk"), table_name="people")
    op.drop_table("people")
