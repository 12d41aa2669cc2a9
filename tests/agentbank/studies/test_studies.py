"""Studies: a cohort of 200 invited through the interview's own code, brought to every stage, read back
as a coordinator reads it (counts, funnel, drop-off, quality), with a withdrawal that leaves a count only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from agentbank.core.errors import ConflictError, InvalidRequestError
from agentbank.db.models import AuditEvent, InterviewInvitation
from agentbank.studies import contacts, export, invitations, setup, stages
from agentbank.studies.quality import Flag
from agentbank.studies.stages import FUNNEL, Stage
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from interviewer.session import invitations as interview_invitations
from interviewer.session.script import load_script, shorten
from tests.support.factories import keyring
from tests.support.interviews import interviewer_model, turn_of
from tests.support.study_factories import (
    CONSENT,
    COORDINATOR,
    bring,
    new_study,
    populate,
    study_script,
)

PLAN = {
    Stage.INVITED: 40, Stage.REVOKED: 10, Stage.EXPIRED: 10, Stage.STARTED: 10, Stage.IN_MODULE: 20,
    Stage.PAUSED: 10, Stage.FINISHED: 15, Stage.CONFIRMED: 15, Stage.SURVEY_DONE: 15, Stage.AGENT_BUILT: 15,
    Stage.RETEST_DUE: 15, Stage.RETEST_DONE: 10, Stage.CARD: 10, Stage.WITHDREW: 5,
}  # fmt: skip


def interviewing(follow_ups: int) -> Services:
    # The scripted interviewer counts follow-ups by question across everyone it interviews.
    return Services(keys=keyring(), chat=interviewer_model(follow_ups), transcriber=FakeTranscriber())


@pytest.fixture
def services():
    return interviewing(follow_ups=0)


def test_a_study_of_200_counts_every_stage_it_was_brought_to(db, services):
    assert sum(PLAN.values()) == 200
    script = study_script()
    study = new_study(db, script)
    at = populate(db, services, study, script, PLAN)

    seen = stages.progress(db, study, datetime.now(UTC))

    assert {stage: n for stage, n in seen.counts.items() if n} == PLAN
    assert seen.invited == 180  # revoked and expired invitations are not out there any more
    # Withdrawals leave a count and nothing else: no row, no time, no quality figure.
    assert len(seen.standings) == 200 - PLAN[Stage.WITHDREW]
    withdrawn = set(at[Stage.WITHDREW])
    assert not any(s.invitation in withdrawn for s in seen.standings)
    funnel = dict(seen.funnel)
    assert [s for s, _ in seen.funnel] == list(FUNNEL)
    assert funnel[Stage.INVITED] == 200 - 10 - 10 - 5
    assert funnel[Stage.STARTED] == 200 - 40 - 10 - 10 - 5
    assert funnel[Stage.FINISHED] == 15 + 15 + 15 + 15 + 15 + 10 + 10
    assert funnel[Stage.CARD] == 10
    by_invitation = {s.invitation: s for s in seen.standings}
    assert {(by_invitation[i].module, by_invitation[i].modules) for i in at[Stage.IN_MODULE]} == {(2, 2)}
    assert {(by_invitation[i].module, by_invitation[i].modules) for i in at[Stage.STARTED]} == {(1, 2)}
    # Drop-off: everyone who started reached module 1; those still at it stand in module 1 or 2.
    first, second = seen.modules
    assert first.reached == 135 and first.under_way == 10 and first.paused == 0
    assert second.reached == 20 + 10 + 95 and second.under_way == 20 and second.paused == 10


def test_quality_is_read_from_counts_written_with_the_turns(db):
    services = interviewing(follow_ups=1)
    script = study_script()
    study = new_study(db, script)
    at = populate(db, services, study, script, {Stage.FINISHED: 1, Stage.IN_MODULE: 1})

    seen = {s.invitation: s for s in stages.progress(db, study, datetime.now(UTC)).standings}

    done = seen[at[Stage.FINISHED][0]].quality
    # Two questions, each answered, followed up once and answered again: four answers, two follow-ups.
    assert done is not None and done.answers == 4 and done.follow_up_share == 0.5
    assert done.words_per_answer == (16 + 14 + 14 + 14) / 4  # the answers' words, counted as they were stored
    assert done.budget_s == 120 and done.duration_s == 4 * 30.0
    assert Flag.LONG not in done.flags and done.audio_flags == 0
    under_way = seen[at[Stage.IN_MODULE][0]].quality
    assert under_way is not None and under_way.answers == 1


def test_short_answers_and_a_long_interview_are_flagged(db, services):
    script = shorten(load_script(), questions_per_module=2, modules=2, seconds=60)
    study = new_study(db, script)
    invitation = invitations.issue(db, study, 1, COORDINATOR, datetime.now(UTC))[0]
    started = interview_invitations.start(db, services, invitation.code, CONSENT, script=script)
    for _ in range(3):  # each over its question's budget, so the interviewer moves on each time
        turn_of(db, services, started.interview).answer("yes", seconds=100.0)

    quality = stages.progress(db, study, datetime.now(UTC)).standings[0].quality

    assert quality is not None and quality.words_per_answer == 1.0
    assert set(quality.flags) == {Flag.SHORT_ANSWERS, Flag.LONG}


def test_revoked_and_expired_invitations_start_nothing(db, services):
    script = study_script()
    study = new_study(db, script)
    revoked, expired, used = invitations.issue(db, study, 3, COORDINATOR, datetime.now(UTC))
    bring(db, services, script, revoked, Stage.REVOKED, study)
    bring(db, services, script, expired, Stage.EXPIRED, study)
    bring(db, services, script, used, Stage.STARTED, study)

    for invitation in (revoked, expired, used):
        with pytest.raises(interview_invitations.InvitationError):
            interview_invitations.start(db, services, invitation.code, CONSENT, script=script)
    # Revoking again touches only what is unused.
    assert invitations.revoke_unused(db, study, COORDINATOR, datetime.now(UTC)) == 1  # the expired one


def test_a_study_is_redeemed_only_on_its_own_script(db, services):
    script = study_script()
    study = new_study(db, script)
    invitation = invitations.issue(db, study, 1, COORDINATOR, datetime.now(UTC))[0]
    other = script.model_copy(update={"version": script.version + 1})

    with pytest.raises(ConflictError, match="script"):
        interview_invitations.start(db, services, invitation.code, CONSENT, script=other)


def test_a_study_refuses_a_past_expiry_a_taken_name_and_a_custom_panel_without_its_parameter(db):
    script = study_script()
    new_study(db, script, name="Taken")
    now = datetime.now(UTC)
    with pytest.raises(ConflictError):
        new_study(db, script, name="  Taken ")
    with pytest.raises(InvalidRequestError, match="past"):
        setup.create_study(db, setup.StudyPlan("Old", script.key, 1, 10, now - timedelta(days=1)), COORDINATOR, now)
    with pytest.raises(InvalidRequestError, match="parameter"):
        new_study(db, script, name="Pool", panel=setup.Panel.CUSTOM)


def test_the_export_names_invitations_and_stages_never_words_and_is_audited(db, services):
    script = study_script()
    study = new_study(db, script)
    populate(db, services, study, script, {Stage.FINISHED: 2, Stage.INVITED: 1})

    text = export.progress_csv(db, study, datetime.now(UTC), COORDINATOR)

    lines = text.strip().split("\n")
    assert lines[0].startswith("invitation,stage,since") and len(lines) == 4
    assert "sea" not in text and "bakeries" not in text and "city" not in text
    events = db.scalars(select(AuditEvent.action).where(AuditEvent.action.like("study.%"))).all()
    assert {"study.create", "study.invite", "study.export"} <= set(events)


def test_a_coordinators_reads_of_the_study_are_audited(db, services):
    script = study_script()
    study = new_study(db, script)
    populate(db, services, study, script, {Stage.FINISHED: 2, Stage.INVITED: 1})

    stages.read_progress(db, study, datetime.now(UTC), COORDINATOR)
    contacts.read_due(db, study, datetime.now(UTC), COORDINATOR)

    events = db.scalars(select(AuditEvent).where(AuditEvent.action.in_(["study.status", "study.due"]))).all()
    seen = {e.action: e for e in events}
    assert seen["study.status"].details == {"study": str(study.id), "rows": 3}
    assert seen["study.due"].details == {"study": str(study.id), "rows": 0}
    assert {e.actor_id for e in events} == {COORDINATOR.id}


def test_withdrawal_forgets_what_the_study_kept(db, services):
    script = study_script()
    study = new_study(db, script, panel=setup.Panel.PROLIFIC)
    invitation = invitations.issue(db, study, 1, COORDINATOR, datetime.now(UTC))[0]
    started = interview_invitations.start(db, services, invitation.code, CONSENT, script=script, panel_ref="5f1e")
    row = db.get(InterviewInvitation, invitation.id)
    assert row is not None and row.panel_ref_encrypted is not None

    from agentbank.participants import withdrawal

    withdrawal.withdraw(db, services.keys, started.participant.id, COORDINATOR, ledger=None)

    db.refresh(row)
    assert row.panel_ref_encrypted is None and row.contact_encrypted is None
    assert db.get(type(started.interview), started.interview.id).answers_given == 0
    assert stages.progress(db, study, datetime.now(UTC)).counts[Stage.WITHDREW] == 1
