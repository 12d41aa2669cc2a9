"""Where a panel's participant goes at the end: the study's completion URL for the interview, and
separately for the retest, carrying the panel's completion code as the panel gave it."""

from __future__ import annotations

import uuid
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentbank.db.models import InterviewInvitation, InterviewSession, Study


class Ending(StrEnum):
    INTERVIEW = "interview"
    RETEST = "retest"


def study_of(session: Session, participant_id: uuid.UUID) -> tuple[Study, InterviewInvitation] | None:
    """The study the participant was invited to and their invitation, or None (invited on their own)."""
    row = session.execute(
        select(Study, InterviewInvitation)
        .join(InterviewInvitation, InterviewInvitation.study_id == Study.id)
        .join(InterviewSession, InterviewSession.id == InterviewInvitation.session_id)
        .where(InterviewSession.participant_id == participant_id)
        .order_by(InterviewInvitation.id.desc())
        .limit(1)
    ).first()
    return (row[0], row[1]) if row is not None else None


def completion_url(session: Session, participant_id: uuid.UUID, ending: Ending) -> str | None:
    """The URL the panel takes the participant back at, once ``ending`` is reached; None without a panel."""
    found = study_of(session, participant_id)
    if found is None:
        return None
    study, _ = found
    return study.completion_url if ending == Ending.INTERVIEW else study.retest_completion_url
