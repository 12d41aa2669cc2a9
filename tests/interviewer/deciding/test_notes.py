"""Notes on the person taken after the reply: none lost on a crash, none taken twice, none overwritten."""

import threading
import time
from functools import partial

from sqlalchemy import create_engine
from sqlalchemy.orm import sessionmaker

from agentbank.db import transaction
from agentbank.providers.fakes import ScriptedChatModel
from interviewer.deciding import notes, replies
from interviewer.deciding.decisions import DECISION_SCHEMA, NOTES_SCHEMA
from interviewer.deciding.speculation import SpeculativeChat
from interviewer.session import interviews, lifecycle
from interviewer.turns import InterviewTurn
from tests.support.interviews import answered, interviewer_model, turn_of, within
from tests.support.interviews import begin as started


def begin(db, services):
    return started(db, services)[1].interview


def reply_only(db, services, interview, text):
    """An answer and its reply as the routes store them, the notes left for later (or lost in a crash)."""
    turn_of(db, services, interview).answer(text, seconds=5)


def stored_notes(db, services, interview):
    db.refresh(interview)
    _, cipher = interviews.cipher_of(db, services, interview)
    return replies.position_of(interview, cipher).notes


def test_the_decision_shown_next_sees_the_notes_taken_after_the_last_reply(db, services):
    interview = begin(db, services)
    answered(db, services, interview, "Gardening keeps me busy.", seconds=5)
    assert stored_notes(db, services, interview) == ("Said Gardening.",)
    answered(db, services, interview, "Roses mostly.", seconds=5)
    decisions = [c for c in services.chat.calls if c["schema"] == DECISION_SCHEMA]
    assert "- Said Gardening." in decisions[-1]["messages"][1]["content"]


def test_answers_a_crash_left_without_notes_are_noted_with_the_next_and_never_twice(db, services):
    interview = begin(db, services)
    reply_only(db, services, interview, "Fishing with my father.")  # the server stopped before the notes
    reply_only(db, services, interview, "Later I moved to Leeds.")
    work = notes.due(db, services, interview)
    assert work is not None and work.answers == ["Fishing with my father.", "Later I moved to Leeds."]
    assert notes.store(db, services, interview, work, notes.take(work))
    assert stored_notes(db, services, interview) == ("Said Later.",)
    assert notes.due(db, services, interview) is None
    # A second taker that read the same answers before the first stored finds them noted: nothing is kept.
    assert not notes.store(db, services, interview, work, ("Something else.",))
    assert stored_notes(db, services, interview) == ("Said Later.",)


def test_a_reply_stored_after_the_notes_keeps_them(db, services):
    """The reply's position was read before the notes were stored; storing it must not put back the old notes."""
    interview = begin(db, services)
    answered(db, services, interview, "Gardening keeps me busy.", seconds=5)
    model, landed = services.chat, []

    def deciding(messages, schema):
        if schema == DECISION_SCHEMA and not landed:  # a server's notes on this answer land while the model decides
            landed.append(notes.take_due(within(db), services, interview.participant_id))
        return model.script(messages, schema)

    services.chat = ScriptedChatModel(deciding)
    turn_of(db, services, interview).answer("Roses mostly.", seconds=5)
    assert landed == [True]
    assert stored_notes(db, services, interview) == ("Said Gardening.", "Said Roses.")


def test_no_notes_once_the_interview_is_over(db, services):
    interview = begin(db, services)
    reply_only(db, services, interview, "Fishing with my father.")
    lifecycle.pause(db, services, interview)
    assert notes.due(db, services, interview) is not None  # a pause does not lose them
    state = turn_of(db, services, interview).resume()
    while state.status == "active":
        state = answered(db, services, interview, "An answer.", seconds=300)
    assert notes.due(db, services, interview) is None


def test_a_server_notes_then_warms_the_next_decision_in_the_models_queue_after_the_reply(fresh_database, services):
    engine = create_engine(fresh_database)
    sessions = sessionmaker(engine, expire_on_commit=False)
    model = interviewer_model()
    running: list[str] = []

    def answer(messages, schema):
        if schema == NOTES_SCHEMA:
            running.append(threading.current_thread().name)
        return model.script(messages, schema)

    scripted = ScriptedChatModel(answer)
    services.chat = SpeculativeChat(scripted)
    try:
        with sessions() as session, session.begin():
            participant_id = begin(session, services).participant_id
        transactions = partial(transaction, sessions)
        with sessions() as session:  # a request's turn: the answer committed, the reply in a transaction of its own
            interview = interviews.current(session, participant_id, lock=True)
            InterviewTurn.load(session, services, interview, transactions).answer("Fishing with my father.")
        began = time.monotonic()
        notes.after_reply(transactions, services, participant_id)
        assert time.monotonic() - began < notes.AFTER_REPLY_S  # the caller does not wait for them
        services.chat.settle(10)
        assert time.monotonic() - began >= notes.AFTER_REPLY_S
        assert len(running) == 1 and running[0].startswith("decide-ahead")  # the model's one queue
        with sessions() as session:
            interview = interviews.current(session, participant_id)
            assert stored_notes(session, services, interview) == ("Said Fishing.",)
        # Then the next decision's prompt up to the answer, with those notes, is read into the model's cache.
        noted, warmed = scripted.calls[-2:]
        assert noted["schema"] == NOTES_SCHEMA and warmed["max_tokens"] == 1
        assert "- Said Fishing." in warmed["messages"][1]["content"]
        assert warmed["messages"][1]["content"].endswith("The person's last answer:\n")
    finally:
        services.chat.stop()
        engine.dispose()


def test_answers_due_are_noted_oldest_first_a_few_at_a_time_and_none_skipped(db, services):
    interview = begin(db, services)
    said = ["Fishing with my father.", "Later I moved to Leeds.", "Nursing suited me.", "Trains I love.", "Bees too."]
    for text in said:
        reply_only(db, services, interview, text)  # notes put off five times (a crash, or the person speaking)
    work = notes.due(db, services, interview)
    assert work is not None and work.answers == said[: notes.MAX_ANSWERS]
    assert notes.store(db, services, interview, work, notes.take(work))
    work = notes.due(db, services, interview)
    assert work is not None and work.answers == said[notes.MAX_ANSWERS :]
    assert notes.store(db, services, interview, work, notes.take(work))
    assert stored_notes(db, services, interview) == ("Said Nursing.", "Said Bees.")
    assert notes.due(db, services, interview) is None


def test_a_server_puts_the_notes_off_when_the_person_begins_to_speak_before_them(fresh_database, services):
    """The person's turn has the cores: notes not begun when they start to speak wait for the next reply,
    and the warm-up that their answer's decision reads goes at once."""
    engine = create_engine(fresh_database)
    sessions = sessionmaker(engine, expire_on_commit=False)
    scripted = ScriptedChatModel(interviewer_model().script)
    services.chat = SpeculativeChat(scripted)
    transactions = partial(transaction, sessions)

    def answer(participant_id, text: str) -> None:
        with sessions() as session:
            interview = interviews.current(session, participant_id, lock=True)
            InterviewTurn.load(session, services, interview, transactions).answer(text)

    try:
        with sessions() as session, session.begin():
            participant_id = begin(session, services).participant_id
        answer(participant_id, "Fishing with my father.")
        began = time.monotonic()
        notes.after_reply(transactions, services, participant_id)
        services.chat.person_speaking()  # the next answer begins before the notes could
        services.chat.settle(10)
        assert time.monotonic() - began < notes.AFTER_REPLY_S  # the warm-up did not wait for the notes' time
        assert [call["schema"] for call in scripted.calls].count(NOTES_SCHEMA) == 0
        assert scripted.calls[-1]["max_tokens"] == 1  # warmed
        with sessions() as session:
            assert notes.due(session, services, interviews.current(session, participant_id)) is not None
        # After the next reply, with the person silent, both answers are noted, the one put off included.
        answer(participant_id, "Later I moved to Leeds.")
        notes.after_reply(transactions, services, participant_id)
        services.chat.settle(10)
        noted = [call for call in scripted.calls if call["schema"] == NOTES_SCHEMA]
        assert len(noted) == 1 and "Fishing with my father." in noted[0]["messages"][1]["content"]
        with sessions() as session:
            interview = interviews.current(session, participant_id)
            assert stored_notes(session, services, interview) == ("Said Later.",)
            assert notes.due(session, services, interview) is None
    finally:
        services.chat.stop()
        engine.dispose()


def test_after_the_opening_a_server_warms_the_first_decision_and_takes_no_notes(fresh_database, services):
    engine = create_engine(fresh_database)
    sessions = sessionmaker(engine, expire_on_commit=False)
    scripted = ScriptedChatModel(interviewer_model().script)
    services.chat = SpeculativeChat(scripted)
    try:
        with sessions() as session, session.begin():
            interview = begin(session, services)
        notes.after_reply(partial(transaction, sessions), services, interview.participant_id)
        services.chat.settle(10)
        [warmed] = scripted.calls  # nothing to note yet: the first decision's prompt alone, read ahead
        assert warmed["max_tokens"] == 1 and warmed["schema"] is None
        assert warmed["messages"][1]["content"].endswith("The person's last answer:\n")
    finally:
        services.chat.stop()
        engine.dispose()
