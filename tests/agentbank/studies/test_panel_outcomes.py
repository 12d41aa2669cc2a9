"""A panel's returned and timed-out submissions: read from its export, matched to invitations by the panel's
id (sealed with each participant's key, opened in memory), recorded as outcomes that move only as listed,
counted in the study's funnel (never on a participant's row), audited, and cleared by a withdrawal."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from agentbank.core.errors import InvalidRequestError
from agentbank.core.statuses import PanelOutcome
from agentbank.db.models import AuditEvent, InterviewInvitation
from agentbank.participants import withdrawal
from agentbank.studies import invitations, outcomes, stages
from agentbank.studies.outcomes import Recorded, Report
from agentbank.studies.setup import Panel
from agentbank.studies.stages import Stage
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from tests.support.factories import keyring
from tests.support.interviews import interviewer_model
from tests.support.study_factories import COORDINATOR, bring, new_study, participant_of, study_script

RETURNED, TIMED_OUT = PanelOutcome.RETURNED, PanelOutcome.TIMED_OUT
EXPORT = (
    "\ufeffSubmission id,Participant id,Status,Started at,Completion code\n"
    "s1,5f00000000000000000000a1,RETURNED,2026-12-01T10:00:00Z,\n"
    "s2,5f00000000000000000000a2,TIMED-OUT,2026-12-01T10:05:00Z,\n"
    "s3,5f00000000000000000000a3,APPROVED,2026-12-01T10:06:00Z,C1A2B3C4\n"
    "s4,5f00000000000000000000a9,AWAITING REVIEW,2026-12-01T10:07:00Z,C1A2B3C4\n"
)


@pytest.fixture
def services():
    return Services(keys=keyring(), chat=interviewer_model(0), transcriber=FakeTranscriber())


@pytest.fixture
def study(db, services):
    """A Prolific study whose visitors a1 (in the interview), a2 (paused), a3 (finished) and a4 (withdrew)
    came with their panel ids."""
    script = study_script()
    study = new_study(db, script, panel=Panel.PROLIFIC)
    issued = invitations.issue(db, study, 4, COORDINATOR, datetime.now(UTC))
    stages_of = (Stage.IN_MODULE, Stage.PAUSED, Stage.CONFIRMED, Stage.WITHDREW)
    for number, (invitation, stage) in enumerate(zip(issued, stages_of, strict=True), start=1):
        bring(db, services, script, invitation, stage, study, panel_ref=f"5f00000000000000000000a{number}")
    return study


def record(db, services, study, *reports: tuple[str, PanelOutcome]) -> Recorded:
    found = [Report(ref, outcome) for ref, outcome in reports]
    return outcomes.record_outcomes(db, services.keys, study, found, datetime.now(UTC), COORDINATOR)


def test_the_panels_export_is_read_for_returned_and_timed_out_lines_only():
    reports, other = outcomes.read_export(EXPORT)
    assert reports == [Report("5f00000000000000000000a1", RETURNED), Report("5f00000000000000000000a2", TIMED_OUT)]
    assert other == 2
    assert [outcomes.outcome_of(s) for s in ("returned", "Timed out", "timed_out", "APPROVED")] == [
        RETURNED, TIMED_OUT, TIMED_OUT, None,
    ]  # fmt: skip
    with pytest.raises(InvalidRequestError, match="'Participant id'"):
        outcomes.read_export("id,status\nx,RETURNED\n")
    assert outcomes.read_export("pid,state\nx,RETURNED\n", "pid", "state") == ([Report("x", RETURNED)], 0)


def test_outcomes_are_matched_by_the_sealed_panel_id_and_counted_in_the_funnel(db, services, study):
    reports, _ = outcomes.read_export(EXPORT)
    done = outcomes.record_outcomes(
        db, services.keys, study, [*reports, Report("5f00000000000000000000a4", RETURNED), Report("nobody", RETURNED)],
        datetime.now(UTC), COORDINATOR,
    )  # fmt: skip
    # a1 and a2 recorded; the withdrawn a4 has no panel id left to match, and nobody never came.
    assert done == Recorded(recorded=2, unchanged=0, refused=0, unmatched=2)
    seen = stages.progress(db, study, datetime.now(UTC))
    assert seen.outcomes == {RETURNED: 1, TIMED_OUT: 1}
    # The stages stay what the bank saw; the outcome is a count beside them, on nobody's row.
    assert {s.stage for s in seen.standings} == {Stage.IN_MODULE, Stage.PAUSED, Stage.CONFIRMED}
    assert all("outcome" not in vars(s) for s in seen.standings)

    events = db.scalars(select(AuditEvent).where(AuditEvent.action == "study.outcome")).all()
    rows = db.scalars(select(InterviewInvitation).where(InterviewInvitation.panel_outcome.is_not(None))).all()
    assert {e.participant_id for e in events} == {participant_of(db, r.id) for r in rows}
    (summary,) = db.scalars(select(AuditEvent).where(AuditEvent.action == "study.outcomes")).all()
    assert summary.details["recorded"] == 2 and summary.details["unmatched"] == 2
    assert not any("5f00" in str(e.details) for e in db.scalars(select(AuditEvent)).all())

    # Moves only as listed: timed out may become returned; returned stays; the same again changes nothing.
    a1, a2 = "5f00000000000000000000a1", "5f00000000000000000000a2"
    assert record(db, services, study, (a2, RETURNED)) == Recorded(1, 0, 0, 0)
    assert record(db, services, study, (a1, TIMED_OUT), (a1, RETURNED)) == Recorded(0, 1, 1, 0)
    assert stages.progress(db, study, datetime.now(UTC)).outcomes == {RETURNED: 2, TIMED_OUT: 0}

    # A withdrawal takes the outcome with the rest: only the count of withdrawals is left.
    withdrawal.withdraw(db, services.keys, participant_of(db, rows[0].id), COORDINATOR, ledger=None)
    after = stages.progress(db, study, datetime.now(UTC))
    assert after.outcomes == {RETURNED: 1, TIMED_OUT: 0} and after.counts[Stage.WITHDREW] == 2


def test_a_malformed_panel_id_is_refused_before_anything_is_recorded(db, services, study):
    for bad in ("", " ", "x" * 201, "tab\there"):
        with pytest.raises(InvalidRequestError):
            record(db, services, study, ("5f00000000000000000000a1", RETURNED), (bad, RETURNED))
    assert stages.progress(db, study, datetime.now(UTC)).outcomes == {RETURNED: 0, TIMED_OUT: 0}
