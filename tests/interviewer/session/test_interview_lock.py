"""Two requests for one interview at once: the first holds the interview's row, the second is told
at once that the interview is busy (409) instead of clashing on a constraint later."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from agentbank.audit import log as audit
from interviewer.services import Services
from interviewer.session import interviews, invitations
from interviewer.session.script import load_script, shorten
from tests.support.factories import keyring
from tests.support.interviews import interviewer_model

CONSENT = {"recording": True, "use": True, "withdrawal": True}


def test_a_second_request_for_a_locked_interview_is_busy(fresh_database):
    engine = create_engine(fresh_database)
    services = Services(keys=keyring(), chat=interviewer_model())
    try:
        with Session(engine) as session, session.begin():
            code = invitations.create_invitation(session, audit.Actor("operator", "test"))
            started = invitations.start(session, services, code, CONSENT, shorten(load_script(), modules=1))
            participant_id = started.participant.id
        with Session(engine) as first, Session(engine) as second:
            with first.begin():
                held = interviews.current(first, participant_id, lock=True)
                with pytest.raises(interviews.InterviewBusyError) as busy, second.begin():
                    interviews.current(second, participant_id, lock=True)
                assert busy.value.status_code == 409 and busy.value.code == "interview_busy"
                # Reading where the interview stands never waits for the lock.
                with second.begin():
                    assert interviews.current(second, participant_id).id == held.id
            with second.begin():  # released with the first transaction
                assert interviews.current(second, participant_id, lock=True).id == held.id
    finally:
        engine.dispose()
