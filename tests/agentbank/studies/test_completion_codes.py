"""Each participant's own completion code: derived when they reach an end, under their data key, so nothing
is stored; distinct from everyone else's and from their other end's, the same on every reading, listed for
the panel's approval (codes only), and gone with a withdrawal. A study's settings refuse a code with nowhere
to go, and a panel's one code is passed on as the panel gave it."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, text

from agentbank.core.errors import ConflictError, InvalidRequestError
from agentbank.db.models import AuditEvent
from agentbank.keys.crypto import DataKeyDestroyedError
from agentbank.participants import withdrawal
from agentbank.studies import completion, setup
from agentbank.studies.completion import CODE_LENGTH, CompletionCodes, Ending
from agentbank.studies.stages import Stage
from interviewer.hearing.transcription import FakeTranscriber
from interviewer.services import Services
from tests.support.factories import keyring
from tests.support.interviews import interviewer_model
from tests.support.study_factories import COORDINATOR, new_study, participant_of, populate, study_script

URL = "https://panel.example/complete?cc={code}"
RETEST_URL = "https://panel.example/complete?cc={code}&wave=2"
OWN = CompletionCodes.PER_PARTICIPANT


@pytest.fixture
def services():
    return Services(keys=keyring(), chat=interviewer_model(0), transcriber=FakeTranscriber())


def code_in(url: str | None) -> str:
    assert url is not None
    found = re.search(r"cc=([0-9A-Z]+)", url)
    assert found is not None, url
    return found.group(1)


def test_each_participant_gets_their_own_code_read_the_same_every_time_and_listed_for_approval(db, services):
    script = study_script()
    study = new_study(db, script, completion_url=URL, retest_completion_url=RETEST_URL,
                      completion_codes=OWN)  # fmt: skip
    plan = {Stage.IN_MODULE: 1, Stage.CONFIRMED: 3, Stage.RETEST_DONE: 1, Stage.WITHDREW: 1}
    at = populate(db, services, study, script, plan)
    finished = [participant_of(db, n) for n in at[Stage.CONFIRMED] + at[Stage.RETEST_DONE]]

    urls = [completion.completion_url(db, services.keys, p, Ending.INTERVIEW) for p in finished]
    codes = [code_in(url) for url in urls]
    assert len(set(codes)) == 4 and all(len(c) == CODE_LENGTH for c in codes)
    assert urls[0] == URL.replace("{code}", codes[0])
    db.expire_all()  # read again from the database: the same codes, derived, never stored
    assert [code_in(completion.completion_url(db, services.keys, p, Ending.INTERVIEW)) for p in finished] == codes
    retest = code_in(completion.completion_url(db, services.keys, finished[-1], Ending.RETEST))
    assert retest not in codes

    listed = completion.codes(db, services.keys, study, COORDINATOR)
    assert {c.code for c in listed if c.ending == Ending.INTERVIEW} == set(codes)  # neither under way nor withdrawn
    assert [c.code for c in listed if c.ending == Ending.RETEST] == [retest]
    assert listed == sorted(listed, key=lambda c: (c.ending, c.code))  # in the codes' order, not the invitations'
    (event,) = db.scalars(select(AuditEvent).where(AuditEvent.action == "study.completion_codes")).all()
    assert event.details == {"study": str(study.id), "rows": 5}
    dumped = db.execute(text("SELECT string_agg(t::text, ' ') FROM interview_invitations t")).scalar()
    audited = db.execute(text("SELECT string_agg(details::text, ' ') FROM audit_events")).scalar()
    assert not any(code in dumped or code in audited for code in [*codes, retest])

    # A withdrawal leaves nothing to make their code from again.
    withdrawal.withdraw(db, services.keys, finished[0], COORDINATOR, ledger=None)
    assert codes[0] not in {c.code for c in completion.codes(db, services.keys, study, COORDINATOR)}
    with pytest.raises(DataKeyDestroyedError):
        completion.completion_url(db, services.keys, finished[0], Ending.INTERVIEW)


def test_a_panels_one_code_is_passed_on_as_given_and_has_no_list(db, services):
    script = study_script()
    given = "https://panel.example/complete?cc=C1A2B3C4"
    study = new_study(db, script, completion_url=given)
    at = populate(db, services, study, script, {Stage.CONFIRMED: 2})
    people = [participant_of(db, n) for n in at[Stage.CONFIRMED]]
    assert {completion.completion_url(db, services.keys, p, Ending.INTERVIEW) for p in people} == {given}
    assert completion.completion_url(db, services.keys, people[0], Ending.RETEST) is None
    with pytest.raises(ConflictError):
        completion.codes(db, services.keys, study, COORDINATOR)


@pytest.mark.parametrize(
    ("codes", "urls", "problem"),
    [
        (OWN, {}, "needs a completion URL"),
        (OWN, {"completion_url": "https://panel.example/done?cc=X"}, "needs"),
        (OWN, {"completion_url": URL, "retest_completion_url": "https://panel.example/done"}, "needs"),
        (OWN, {"completion_url": URL + "{code}"}, "needs"),
        (CompletionCodes.PANEL, {"completion_url": URL}, "asks for each participant's own code"),
    ],
)
def test_a_code_with_nowhere_to_go_is_refused_when_the_study_is_made(db, codes, urls, problem):
    script, now = study_script(), datetime.now(UTC)
    plan = setup.StudyPlan("Coded", script.key, script.version, 10, now + timedelta(days=30),
                           setup.Panel.PROLIFIC, completion_codes=codes, **urls)  # fmt: skip
    with pytest.raises(InvalidRequestError, match=problem):
        setup.create_study(db, plan, COORDINATOR, now)
