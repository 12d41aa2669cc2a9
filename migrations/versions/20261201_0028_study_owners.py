"""Studies get an owner: the client that created one reads and changes it, and nobody else does.

A study's name is unique per owner, not across the bank: a coordinator told that another's study has the
name they chose would learn of a study they cannot see.

Studies made before this had none; they stay the operator's (``owner_pk`` null), reached from the
command line, until the operator transfers them (``agentbank study transfer``).

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("studies", sa.Column("owner_pk", sa.Uuid(), nullable=True))
    op.create_foreign_key(op.f("fk_studies_owner_pk_clients"), "studies", "clients", ["owner_pk"], ["id"])
    op.create_index(op.f("ix_studies_owner_pk"), "studies", ["owner_pk"])
    op.drop_constraint(op.f("uq_studies_name"), "studies", type_="unique")
    # NULLS NOT DISTINCT: the operator's own studies (no owner) keep distinct names among themselves too.
    op.create_index(
        "uq_studies_owner_name", "studies", ["owner_pk", "name"], unique=True, postgresql_nulls_not_distinct=True
    )


def downgrade() -> None:
    op.drop_index("uq_studies_owner_name", table_name="studies")
    op.create_unique_constraint(op.f("uq_studies_name"), "studies", ["name"])
    op.drop_index(op.f("ix_studies_owner_pk"), table_name="studies")
    op.drop_constraint(op.f("fk_studies_owner_pk_clients"), "studies", type_="foreignkey")
    op.drop_column("studies", "owner_pk")
