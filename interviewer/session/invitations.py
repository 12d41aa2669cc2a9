"""Invitations: a one-time code redeemed with consent starts an interview for a new participant.

Only the code's hash is stored. Redeeming it creates the participant, their data key, a draft
transcript and the opening turn, and issues the token the interview page signs in with. A study's
invitation (``agentbank.studies``) may have expired or been revoked, must be redeemed on the study's
script, and keeps the panel's id for the person sealed with their new key.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.orm import Session

from agentbank.access.clients import issue_participant_token
from agentbank.audit import log as audit
from agentbank.audit.tiers import Tier
from agentbank.building.transcripts import new_pseudonym
from agentbank.core.errors import ConflictError, InvalidRequestError
from agentbank.core.statuses import ConsentStatus, InterviewStatus, TranscriptStatus
from agentbank.db.models import InterviewInvitation, InterviewSession, Participant, Study, Transcript
from agentbank.keys.rotation import hold_keyring
from agentbank.studies.invitations import InvitationError, code_hash, new_code, redeemable, seal_panel_ref
from interviewer.session.interviews import SessionServices, actor_of
from interviewer.session.script import Script, load_script
from interviewer.session.transcripts import add_turn

CONSENT_ITEMS = ("recording", "use", "withdrawal")
# The interview token outlives a pause of some days.
INTERVIEW_TOKEN_LIFETIME_S = 14 * 24 * 3600


__all__ = ["CONSENT_ITEMS", "InvitationError", "Started", "code_hash", "create_invitation", "start"]


@dataclass(frozen=True)
class Started:
    """A redeemed invitation: the interview, its participant and their session token."""

    interview: InterviewSession
    participant: Participant
    token: str


def create_invitation(session: Session, actor: audit.Actor) -> str:
    """A new one-time invitation code; only its hash is stored."""
    code = new_code()
    session.add(InterviewInvitation(code_hash=code_hash(code)))
    session.flush()
    audit.record(session, actor, "interview.invite", Tier.ADMIN)
    return code


def start(
    session: Session,
    services: SessionServices,
    invite: str,
    consent: dict[str, bool],
    script: Script | None = None,
    *,
    panel_ref: str | None = None,
) -> Started:
    """Redeem an invitation with consent: a new participant, their key, a draft transcript, the first turn.
    ``panel_ref`` is the panel's id for the person, as the study's link carried it."""
    missing = [item for item in CONSENT_ITEMS if consent.get(item) is not True]
    if missing:
        raise InvalidRequestError(f"the interview needs consent to: {', '.join(missing)}")
    now = services.clock()
    invitation = redeemable(session, invite, now)
    script = script or load_script()
    study = session.get(Study, invitation.study_id) if invitation.study_id is not None else None
    if study is not None and (study.script_key, study.script_version) != (script.key, script.version):
        raise ConflictError("this study's interview script is not the one this server runs",
                            hint=f"the study runs {study.script_key} version {study.script_version}")  # fmt: skip
    interview_id = uuid.uuid4()
    # "interviewing" keeps a half-told story out of agent builds until the participant confirms it.
    participant = Participant(
        id=uuid.uuid4(),
        pseudonym=new_pseudonym(),
        source_ref=f"interview:{interview_id}",
        consent=ConsentStatus.INTERVIEWING,
    )
    hold_keyring(session)
    participant.wrapped_key, cipher = services.keys.new_key(participant.id)
    transcript = Transcript(id=uuid.uuid4(), participant_id=participant.id, version=1, status=TranscriptStatus.DRAFT)
    session.add_all([participant, transcript])
    session.flush()
    interview = InterviewSession(
        id=interview_id,
        participant_id=participant.id,
        transcript_id=transcript.id,
        script_key=script.key,
        script_version=script.version,
        script_fingerprint=script.fingerprint,
        script=script.model_dump(mode="json"),
        status=InterviewStatus.ACTIVE,
        consent={item: True for item in CONSENT_ITEMS},
        consented_at=now,
        question_index=0,
        follow_ups=0,
        seconds_used={},
        notes_encrypted=None,
        updated_at=now,
    )
    session.add(interview)
    session.flush()
    invitation.used_at, invitation.session_id = now, interview.id
    seal_panel_ref(invitation, cipher, panel_ref if study is not None else None)
    add_turn(session, transcript.id, 1, "interviewer", script.first_words(), cipher, now, now)
    token = issue_participant_token(session, participant, INTERVIEW_TOKEN_LIFETIME_S)
    audit.record(
        session,
        actor_of(participant),
        "interview.start",
        Tier.PARTICIPANT,
        participant_id=participant.id,
        details={"script": script.key, "version": script.version, "consent": list(CONSENT_ITEMS)},
    )
    return Started(interview, participant, token)
