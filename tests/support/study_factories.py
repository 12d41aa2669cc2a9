"""Scripted participants of a study, each brought to a chosen stage through the interview's own code
(invitation, turns, pause, finish, withdrawal) and, past the interview, the rows the survey, the builds
and the evaluation write."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from agentbank.audit import log as audit
from agentbank.core.statuses import BatteryWaveStatus, InterviewStatus
from agentbank.db.models import Agent, BatteryWave, InterviewInvitation, InterviewSession, ReportCard
from agentbank.participants import withdrawal
from agentbank.studies import invitations as study_invitations
from agentbank.studies import setup
from agentbank.studies.stages import Stage
from interviewer.session import interviews, invitations, lifecycle
from interviewer.session.script import Script, load_script, shorten
from tests.support.interviews import turn_of

COORDINATOR = audit.Actor("client", "coordinator")
CONSENT = dict.fromkeys(invitations.CONSENT_ITEMS, True)
# Where the interview stops, for each stage reached by the interview itself.
_INTERVIEW_STAGES = (Stage.STARTED, Stage.IN_MODULE, Stage.PAUSED, Stage.FINISHED)


def study_script() -> Script:
    """Two modules of one question each: quick to finish, and enough for "module m of M"."""
    return shorten(load_script(), questions_per_module=1, modules=2, seconds=60)


def new_study(
    db, script: Script, *, name: str = "Life stories 2027", target: int = 200, owner=None, **panel
) -> setup.Study:
    """A study of the operator's, or of client ``owner`` (its primary key)."""
    now = datetime.now(UTC)
    plan = setup.StudyPlan(name, script.key, script.version, target, now + timedelta(days=30), **panel)
    return setup.create_study(db, plan, COORDINATOR, now, owner_pk=owner)


def populate(db, services, study, script: Script, plan: dict[Stage, int]) -> dict[Stage, list[int]]:
    """Invite ``sum(plan.values())`` people to ``study`` and bring ``plan[stage]`` of them to each stage;
    the invitation numbers at each stage."""
    now = datetime.now(UTC)
    issued = study_invitations.issue(db, study, sum(plan.values()), COORDINATOR, now)
    at: dict[Stage, list[int]] = {}
    queue = iter(issued)
    for stage, count in plan.items():
        for _ in range(count):
            invitation = next(queue)
            at.setdefault(stage, []).append(invitation.id)
            bring(db, services, script, invitation, stage, study)
    return at


def bring(
    db, services, script: Script, invitation, stage: Stage, study, panel_ref: str | None = None
) -> uuid.UUID | None:
    """One participant, from their invitation to ``stage`` (with the panel's id ``panel_ref``, as a panel's link
    brings it); their id once they have one."""
    now = datetime.now(UTC)
    if stage == Stage.INVITED:
        return None
    if stage == Stage.REVOKED:
        study_invitations.revoke_unused(db, study, COORDINATOR, now, [invitation.id])
        return None
    if stage == Stage.EXPIRED:
        db.execute(
            update(InterviewInvitation)
            .where(InterviewInvitation.id == invitation.id)
            .values(expires_at=now - timedelta(hours=1))
        )
        return None
    started = invitations.start(db, services, invitation.code, CONSENT, script=script, panel_ref=panel_ref)
    interview, participant_id = started.interview, started.participant.id
    if stage == Stage.STARTED:
        return participant_id
    answer(db, services, interview, "I grew up by the sea, in a small town with one school and two bakeries.")
    if stage == Stage.IN_MODULE:
        return participant_id
    if stage == Stage.PAUSED:
        lifecycle.pause(db, services, interviews.current(db, participant_id, lock=True))
        return participant_id
    while interviews.current(db, participant_id).status == InterviewStatus.ACTIVE:
        answer(db, services, interview, "We moved when I was twelve, and I learnt to like the city slowly.")
    if stage == Stage.FINISHED:
        return participant_id
    lifecycle.finish(db, services, interviews.current(db, participant_id, lock=True), [], confirm=True)
    later = [Stage.SURVEY_DONE, Stage.AGENT_BUILT, Stage.RETEST_DUE, Stage.RETEST_DONE, Stage.CARD]
    reach = later[: later.index(stage) + 1] if stage in later else later[:2] if stage == Stage.WITHDREW else []
    _past_interview(db, participant_id, interview.transcript_id, reach)
    if stage == Stage.WITHDREW:
        withdrawal.withdraw(db, services.keys, participant_id, audit.Actor("participant", "p"), ledger=None)
    db.flush()
    return participant_id


def answer(db, services, interview, text: str) -> None:
    turn_of(db, services, interview).answer(text, seconds=30.0)


def _past_interview(db, participant_id: uuid.UUID, transcript_id: uuid.UUID, reach: list[Stage]) -> None:
    """The rows the survey, the agent build, the retest and the evaluation leave."""
    now = datetime.now(UTC)
    if Stage.SURVEY_DONE in reach:
        db.add(BatteryWave(participant_id=participant_id, wave=1, status=BatteryWaveStatus.COMPLETE,
                           due_at=now - timedelta(days=15), completed_at=now - timedelta(days=15)))  # fmt: skip
        retest_due = now - timedelta(days=1) if Stage.RETEST_DUE in reach else now + timedelta(days=13)
        done = Stage.RETEST_DONE in reach
        db.add(BatteryWave(participant_id=participant_id, wave=2,
                           status=BatteryWaveStatus.COMPLETE if done else BatteryWaveStatus.SCHEDULED,
                           due_at=retest_due, completed_at=now if done else None))  # fmt: skip
    if Stage.AGENT_BUILT in reach:
        agent = Agent(id=uuid.uuid4(), participant_id=participant_id, version=1, transcript_id=transcript_id)
        db.add(agent)
        db.flush()
        if Stage.CARD in reach:
            db.add(ReportCard(agent_id=agent.id, instrument="gss", run_id="run-1", condition="interview",
                              model="scripted", prompt_version="v1", scores_encrypted=b"sealed"))  # fmt: skip
    db.flush()


def participant_of(db, invitation: int) -> uuid.UUID:
    """The participant who redeemed invitation number ``invitation``."""
    return db.scalars(
        select(InterviewSession.participant_id)
        .join(InterviewInvitation, InterviewInvitation.session_id == InterviewSession.id)
        .where(InterviewInvitation.id == invitation)
    ).one()
