"""Interviews in progress: invitations, sessions (where each interview stands), uploaded audio and
the text transcribed from it so far."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, DateTime, ForeignKey, Integer, LargeBinary, String, UniqueConstraint, false, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from agentbank.core.statuses import InterviewStatus, PanelOutcome, StatusColumn
from agentbank.db.base import Base


class InterviewSession(Base):
    """One participant's interview: the script it follows and the position reached.

    Everything needed to continue lives here and in the transcript's turns, so any server can pick
    an interview up after a restart. ``notes_encrypted`` is sealed with the participant's key.
    """

    __tablename__ = "interview_sessions"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    participant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("participants.id"), index=True)
    transcript_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("transcripts.id"))
    script_key: Mapped[str] = mapped_column(String(64))
    script_version: Mapped[int] = mapped_column(Integer)
    script_fingerprint: Mapped[str] = mapped_column(String(64))
    # The script itself (wording, not personal data), so a custom or shortened script resumes exactly.
    script: Mapped[dict[str, Any]] = mapped_column(JSONB)
    status: Mapped[InterviewStatus] = mapped_column(StatusColumn(InterviewStatus), default=InterviewStatus.ACTIVE)
    consent: Mapped[dict[str, Any]] = mapped_column(JSONB)
    consented_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    question_index: Mapped[int] = mapped_column(Integer, default=0)
    follow_ups: Mapped[int] = mapped_column(Integer, default=0)
    seconds_used: Mapped[dict[str, float]] = mapped_column(JSONB, default=dict)
    notes_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary)
    # The interviewer told the person back what it heard in the module just ended and waits for their answer
    # to it (``interviewer.deciding.reflecting``); question_index is already the next question.
    reflecting: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The transcript position of the last answer the notes were taken on: they are taken after the reply,
    # so answers after this one still wait for theirs (a crash in between only delays them).
    notes_through: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The recording of the current answer that chunks must belong to; a new recording of the same
    # turn takes the next number and replaces the old audio, so two recordings are never spliced.
    audio_take: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Counts kept as the turns are written, so a coordinator sees an interview's quality without anyone
    # opening its words: answers given, their words, follow-ups asked, answers whose audio was poor.
    # Zeroed when the participant withdraws.
    answers_given: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    answer_words: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    follow_ups_asked: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    audio_flags: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )


AUDIO_DIGEST = "audio-chunk"  # the purpose the chunks' keyed digests are derived for


class AudioChunk(Base):
    """A piece of a participant's spoken answer, as uploaded, sealed with their key.

    ``sha256`` is the chunk's SHA-256 keyed under the same key (``Cipher.digest(AUDIO_DIGEST, ...)``): it
    tells a repeated upload from different audio without letting a backup confirm a guessed recording.
    """

    __tablename__ = "audio_chunks"
    __table_args__ = (UniqueConstraint("session_id", "turn", "seq"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    session_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("interview_sessions.id"))
    turn: Mapped[int] = mapped_column(Integer)  # the transcript position the answer will take
    seq: Mapped[int] = mapped_column(Integer)
    data_encrypted: Mapped[bytes] = mapped_column(LargeBinary)
    sha256: Mapped[str] = mapped_column(String(64))
    bytes: Mapped[int] = mapped_column(Integer)
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class AudioPartial(Base):
    """Text already transcribed from the start of a turn's audio, while the participant was speaking.

    Covers decoded samples ``[start_sample, end_sample)`` of the turn, worked out from its first
    ``chunks`` chunks (``chunks_sha256`` is the digest of their digests, so a partial of audio that
    has since changed is never used). Only a head start for the end of the turn: it can always be
    recomputed from the chunks. ``text_encrypted`` is sealed with the participant's key.
    """

    __tablename__ = "audio_partials"
    __table_args__ = (UniqueConstraint("session_id", "turn", "start_sample"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    session_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("interview_sessions.id"))
    turn: Mapped[int] = mapped_column(Integer)
    start_sample: Mapped[int] = mapped_column(Integer)
    end_sample: Mapped[int] = mapped_column(Integer)
    chunks: Mapped[int] = mapped_column(Integer)
    chunks_sha256: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(String(100))
    text_encrypted: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class InterviewInvitation(Base):
    """A one-time code an operator hands to a future participant; only its hash is stored.

    An invitation of a study may expire or be revoked while unused. Once redeemed, the panel's id for the
    person and the contact they chose to leave are sealed with the participant's data key (so destroyed
    with it); ``reminded_at`` is when the retest reminder was last sent, ``reminder_failed_at`` when the last
    attempt to send it failed (it is tried again). ``panel_outcome`` is what the study's panel last reported of
    a person who did not complete there (returned, timed out), recorded by the coordinator.
    """

    __tablename__ = "interview_invitations"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    session_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("interview_sessions.id"))
    study_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("studies.id"), index=True)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    panel_ref_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary)
    contact_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary)
    reminded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    reminder_failed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    panel_outcome: Mapped[PanelOutcome | None] = mapped_column(StatusColumn(PanelOutcome))
    panel_outcome_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
