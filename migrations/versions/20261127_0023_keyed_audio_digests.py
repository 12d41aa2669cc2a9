"""The digests of recorded audio keyed under each participant's data key: a backup can no longer confirm a
guessed recording, and the digests mean nothing once the key is destroyed.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-27
"""

from collections.abc import Sequence

from alembic import op

from migrations.backfills.seal_personal_data import key_audio_digests, plain_audio_digests

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

AUDIO_DIGEST = "audio-chunk"  # as the bank derives it (agentbank.db.models.interviews), fixed here as of 0023


def upgrade() -> None:
    key_audio_digests(op.get_bind(), AUDIO_DIGEST)


def downgrade() -> None:
    plain_audio_digests(op.get_bind())
