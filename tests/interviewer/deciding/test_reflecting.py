"""Reflect-back: at the end of each module the interviewer tells the person what it heard and asks whether
it got it right; their confirmation or correction is an answer of the transcript, and the next question
follows without a model call or a second of its budget."""

import pytest

from agentbank.building.transcripts import load_turns
from agentbank.core.errors import ProviderError
from agentbank.providers.fakes import ScriptedChatModel
from interviewer.deciding import reflecting, replies
from interviewer.deciding.decisions import DECISION_SCHEMA
from interviewer.deciding.interviewer import Exchange, Interviewer, Position
from interviewer.deciding.reflecting import SUMMARY_SCHEMA
from interviewer.services import Services
from interviewer.session import interviews
from interviewer.session.script import load_script, shorten
from tests.support.factories import keyring
from tests.support.interviews import answered, interviewer_model
from tests.support.interviews import begin as started

SCRIPT = shorten(load_script(), questions_per_module=2, modules=2, seconds=60)
FIRST, SECOND = SCRIPT.modules
HEARD = "You told me you grew up by the sea in Maine. Your father fished for a living."
NEXT = {"decision": {"action": "next"}}


def by_schema(summary=HEARD, decision=NEXT):
    def respond(messages, schema):
        if schema == SUMMARY_SCHEMA:
            return summary if isinstance(summary, Exception) else {"summary": summary}
        return decision

    return ScriptedChatModel(respond)


def transcript(*answers: str) -> list[Exchange]:
    turns = [Exchange("interviewer", SCRIPT.first_words())]
    for n, answer in enumerate(answers):
        turns.append(Exchange("participant", answer))
        if n + 1 < len(answers):
            turns.append(Exchange("interviewer", FIRST.questions[1].text))
    return turns


def test_the_end_of_a_module_is_told_back_from_the_persons_own_answers_then_checked():
    chat = by_schema()
    engine = Interviewer(SCRIPT, chat)
    within = engine.respond(Position(), "I grew up by the sea.", 10, transcript("I grew up by the sea."))
    assert within.action == "next" and within.text == FIRST.questions[1].text  # same module: no summary
    turns = transcript("I grew up by the sea.", "My father fished.")
    step = engine.respond(within.position, "My father fished.", 10, turns)
    assert step.action == "reflect" and step.text == f"{HEARD} {reflecting.CHECK}"
    assert step.position.reflecting and step.position.index == 2  # the next module's first question waits
    asked = [c for c in chat.calls if c["schema"] == SUMMARY_SCHEMA]
    assert len(asked) == 1
    shown = asked[0]["messages"][-1]["content"]
    assert FIRST.title in shown and "- I grew up by the sea.\n- My father fished." in shown


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("Yes, that's right.", reflecting.CONFIRMED),
        ("Exactly.", reflecting.CONFIRMED),
        ("Yes, but it was my uncle who fished, not my father.", reflecting.CORRECTED),
        ("No, we lived inland, in Bangor.", reflecting.CORRECTED),
    ],
)
def test_a_confirmation_is_thanked_and_a_correction_acknowledged_before_the_next_question(answer, said):
    chat = by_schema()
    engine = Interviewer(SCRIPT, chat)
    waiting = Position(index=2, seconds_used={FIRST.questions[0].key: 20.0}, reflecting=True)
    step = engine.respond(waiting, answer, 15, [])
    assert step.action == "next" and step.text == f"{said} {SECOND.questions[0].text}"
    assert not step.position.reflecting and step.position.index == 2
    assert step.position.seconds_used == waiting.seconds_used  # the answer to a summary costs no question time
    assert chat.calls == []


def test_the_last_module_is_told_back_before_the_closing():
    engine = Interviewer(SCRIPT, by_schema())
    turns = [Exchange("interviewer", SECOND.questions[0].text), Exchange("participant", "I sing in a choir.")]
    step = engine.respond(Position(index=3, follow_ups=0), "I sing in a choir.", 10, turns)
    assert step.action == "reflect" and step.position.index == 4
    closing = engine.respond(step.position, "That's right.", 5, [])
    assert closing.action == "closing" and closing.text == f"{reflecting.CONFIRMED} {SCRIPT.closing.strip()}"


@pytest.mark.parametrize(
    "summary",
    [ProviderError("the model went away"), "", "Yes.", "Where did you grow up? You said Maine.",
     {"not": "a summary"}],
)  # fmt: skip
def test_no_usable_summary_goes_straight_on(summary):
    chat = by_schema(summary=summary) if not isinstance(summary, dict) else ScriptedChatModel([NEXT, summary])
    step = Interviewer(SCRIPT, chat).respond(Position(index=1), "My father fished.", 10, transcript("a", "b"))
    assert step.action == "next" and step.text == SECOND.questions[0].text and not step.position.reflecting


def test_a_script_can_turn_it_off():
    chat = by_schema()
    script = SCRIPT.model_copy(update={"reflect_back": False})
    step = Interviewer(script, chat).respond(Position(index=1), "My father fished.", 10, transcript("a", "b"))
    assert step.action == "next" and [c["schema"] for c in chat.calls] == [DECISION_SCHEMA]


def test_a_long_summary_is_cut_to_three_sentences():
    told = " ".join(f"You told me fact number {n}." for n in range(6))
    step = Interviewer(SCRIPT, by_schema(summary=told)).respond(Position(index=1), "b", 10, transcript("a", "b"))
    assert step.text == "You told me fact number 0. You told me fact number 1. You told me fact number 2. " + (
        reflecting.CHECK
    )


def test_an_interview_tells_each_module_back_and_keeps_the_confirmation_and_the_correction(db):
    """Through the turn's owner, as the routes run it: the summary, the person's answer to it and the next
    question are turns of the transcript in order, the position waits across requests, and the correction
    is noted like any answer."""
    services = Services(keys=keyring(), chat=interviewer_model(follow_ups=0, summary=HEARD))
    interview = started(db, services)[1].interview
    script = interviewer_script(db, interview)
    first, second, third = (m.questions[0].text for m in script.modules[:3])
    told = answered(db, services, interview, "I grew up by the sea in Maine.", seconds=5)
    assert told.prompt == f"{HEARD} {reflecting.CHECK}"
    db.refresh(interview)
    assert interview.reflecting and interview.question_index == 1
    assert answered(db, services, interview, "Yes, that's right.").prompt == f"{reflecting.CONFIRMED} {second}"
    assert answered(db, services, interview, "I worked at the mill.", seconds=5).prompt.endswith(reflecting.CHECK)
    correction = "No, it was the cannery, not the mill."
    assert answered(db, services, interview, correction).prompt == f"{reflecting.CORRECTED} {third}"
    db.refresh(interview)
    assert not interview.reflecting and interview.question_index == 2
    assert interview.seconds_used == {script.modules[0].questions[0].key: 5.0, script.modules[1].questions[0].key: 5.0}

    _, cipher = interviews.cipher_of(db, services, interview)
    said = [(t.speaker, t.text) for t in load_turns(db, interview.transcript_id, cipher)]
    assert [text for _, text in said[1:]] == [
        "I grew up by the sea in Maine.", f"{HEARD} {reflecting.CHECK}", "Yes, that's right.",
        f"{reflecting.CONFIRMED} {second}", "I worked at the mill.", f"{HEARD} {reflecting.CHECK}", correction,
        f"{reflecting.CORRECTED} {third}",
    ]  # fmt: skip
    assert said[0][1].endswith(first)
    assert "Said No,." in replies.position_of(interview, cipher).notes  # the correction, noted


def interviewer_script(db, interview):
    db.refresh(interview)
    return interviews.script_of(interview)
