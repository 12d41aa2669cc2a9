"""The turn's owner when something happens while its model decides: another request replies to the
answer first, or the participant withdraws. Nothing is stored twice, nothing after a withdrawal."""

import pytest
from sqlalchemy import select, update

from agentbank.db.models import Participant, Turn
from agentbank.keys.crypto import DataKeyDestroyedError
from agentbank.providers.fakes import ScriptedChatModel
from interviewer.session import lifecycle
from tests.support.interviews import begin, turn_of


def meanwhile(services, happening):
    """The interviewer's model, with ``happening`` run once while it makes its first decision."""
    model, done = services.chat, []

    def deciding(messages, schema):
        if not done:
            done.append(True)
            happening()
        return model.script(messages, schema)

    return ScriptedChatModel(deciding)


def test_an_answer_another_request_replied_to_meanwhile_gets_one_reply(db, services):
    interview = begin(db, services)[1].interview
    # A reload while the model decides: the page sees the answer waiting and resumes, which replies to it.
    services.chat = meanwhile(services, lambda: turn_of(db, services, interview).resume())
    state = turn_of(db, services, interview).answer("We kept bees.", seconds=5)
    speakers = [t.speaker for t in lifecycle.transcript(db, services, interview)]
    assert speakers == ["interviewer", "participant", "interviewer"]
    assert state.turn == 4 and not state.awaiting_reply and state.prompt == "Could you tell me more about that?"


def test_no_reply_is_stored_once_the_participant_has_withdrawn(db, services):
    interview = begin(db, services)[1].interview
    participant_id = interview.participant_id

    def withdraws():
        db.execute(update(Participant).where(Participant.id == participant_id).values(wrapped_key=None))

    services.chat = meanwhile(services, withdraws)
    with pytest.raises(DataKeyDestroyedError):
        turn_of(db, services, interview).answer("We kept bees.", seconds=5)
    transcript = select(Turn.speaker).where(Turn.transcript_id == interview.transcript_id)
    stored = db.scalars(transcript.order_by(Turn.position))
    assert list(stored) == ["interviewer", "participant"] and interview.question_index == 0
