"""Reflect-back: at the end of each module the interviewer tells the person what it heard and asks whether
it got it right; their confirmation or correction is an answer of the transcript, and the next question
follows without a model call or a second of its budget."""

import pytest

from agentbank.building.transcripts import load_turns
from agentbank.core.errors import ProviderError
from agentbank.core.settings import Settings
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
MILL = "You told me that you worked at the mill."  # the same summary does not hold there: their own words
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
    turns = transcript("I grew up by the sea in Maine.", "My father fished for a living.")
    step = engine.respond(within.position, "My father fished for a living.", 10, turns)
    assert step.action == "reflect" and step.text == f"{HEARD} {reflecting.CHECK}"
    assert step.position.reflecting and step.position.index == 2  # the next module's first question waits
    asked = [c for c in chat.calls if c["schema"] == SUMMARY_SCHEMA]
    assert len(asked) == 1
    shown = asked[0]["messages"][-1]["content"]
    assert FIRST.title in shown and "- I grew up by the sea in Maine.\n- My father fished for a living." in shown


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
    sung = "I grew up by the sea in Maine and my father fished for a living."
    turns = [Exchange("interviewer", SECOND.questions[0].text), Exchange("participant", sung)]
    step = engine.respond(Position(index=3, follow_ups=0), sung, 10, turns)
    assert step.action == "reflect" and step.position.index == 4
    closing = engine.respond(step.position, "That's right.", 5, [])
    assert closing.action == "closing" and closing.text == f"{reflecting.CONFIRMED} {SCRIPT.closing.strip()}"


@pytest.mark.parametrize("summary", [ProviderError("the model went away"), "", {"not": "a summary"}])
def test_a_model_that_fails_or_has_nothing_to_tell_back_goes_straight_on(summary):
    chat = by_schema(summary=summary) if not isinstance(summary, dict) else ScriptedChatModel([NEXT, summary])
    step = Interviewer(SCRIPT, chat).respond(Position(index=1), "b", 10, transcript("a", "b"))
    assert step.action == "next" and step.text == SECOND.questions[0].text and not step.position.reflecting


ANSWERS = ["I grew up in a fishing town in Maine, the youngest of four.",
           "My mother ran the bakery on the harbour and my father fished for lobster."]  # fmt: skip
THEIR_WORDS = ("You told me that you grew up in a fishing town in Maine, the youngest of four. And that your mother "
               f"ran the bakery on the harbour and your father fished for lobster. {reflecting.CHECK}")  # fmt: skip


@pytest.mark.parametrize(
    "summary",
    [
        "Yes.",  # too short to tell anything
        "Where did you grow up? You said Maine.",  # a question, and then too little
        "I grew up in a fishing town in Maine. My mother ran the bakery.",  # spoken as the person
        "You told me you are a chef who loves cooking fish. Your friend Robin is a great person.",  # never said
    ],
)
def test_a_summary_that_does_not_hold_to_what_was_said_is_told_back_in_their_own_words(summary):
    step = Interviewer(SCRIPT, by_schema(summary=summary)).respond(Position(index=1), ANSWERS[1], 10,
                                                                   transcript(*ANSWERS))  # fmt: skip
    assert step.action == "reflect" and step.text == THEIR_WORDS


def test_of_a_summary_only_the_sentences_that_hold_are_told_back():
    wandering = (
        "You told me that you grew up in a fishing town in Maine, the youngest of four. Your father "
        "fished for lobster. You told me that you grew up on a fishing boat and that you were a fisherman."
    )
    step = Interviewer(SCRIPT, by_schema(summary=wandering)).respond(Position(index=1), ANSWERS[1], 10,
                                                                     transcript(*ANSWERS))  # fmt: skip
    assert step.text == ("You told me that you grew up in a fishing town in Maine, the youngest of four. Your father "
                         f"fished for lobster. {reflecting.CHECK}")  # fmt: skip


def test_told_back_in_their_own_words_the_model_is_not_asked():
    chat = by_schema()
    engine = Interviewer(SCRIPT, chat, summaries=reflecting.Summaries.WORDS)
    step = engine.respond(Position(index=1), ANSWERS[1], 10, transcript(*ANSWERS))
    assert step.action == "reflect" and step.text == THEIR_WORDS
    assert [c["schema"] for c in chat.calls] == [DECISION_SCHEMA]


@pytest.mark.parametrize(
    ("setting", "provider", "chosen"),
    [("auto", "embedded", "words"), ("auto", "openai", "model"), ("model", "embedded", "model"),
     ("words", "openai", "words")],
)  # fmt: skip
def test_auto_tells_back_in_their_words_on_the_embedded_model(setting, provider, chosen):
    remote = {"chat_model": "m", "chat_base_url": "http://127.0.0.1:9/v1"} if provider == "openai" else {}
    settings = Settings(interviewer_summaries=setting, chat_provider=provider, **remote)
    assert reflecting.Summaries.of(settings) == chosen


def test_a_script_can_turn_it_off():
    chat = by_schema()
    script = SCRIPT.model_copy(update={"reflect_back": False})
    step = Interviewer(script, chat).respond(Position(index=1), "My father fished.", 10, transcript("a", "b"))
    assert step.action == "next" and [c["schema"] for c in chat.calls] == [DECISION_SCHEMA]


def test_a_sentence_said_again_is_dropped():
    looped = ("You grew up in a fishing town in Maine. You told me that you grew up in a fishing town in Maine. "
              "Your father fished for lobster.")  # fmt: skip
    said = transcript("I grew up in a fishing town in Maine.", "My father fished for lobster.")
    step = Interviewer(SCRIPT, by_schema(summary=looped)).respond(Position(index=1), "b", 10, said)
    assert step.text == f"You grew up in a fishing town in Maine. Your father fished for lobster. {reflecting.CHECK}"


def test_the_state_names_the_module_just_told_back_until_the_person_answers(db):
    services = Services(keys=keyring(), chat=interviewer_model(follow_ups=0, summary=HEARD))
    interview = started(db, services)[1].interview
    script = interviewer_script(db, interview)
    waiting = answered(db, services, interview, "I grew up by the sea in Maine.", seconds=5)
    assert (waiting.module, waiting.index) == (script.modules[0].key, 1)
    moved_on = answered(db, services, interview, "Yes.")
    assert (moved_on.module, moved_on.index) == (script.modules[1].key, 2)


def test_a_long_summary_is_cut_to_three_sentences():
    facts = ["You grew up in Maine.", "Your father fished for lobster.", "Summers were spent on the water.",
             "Winters meant shovelling snow.", "College took you to Boston."]  # fmt: skip
    said = transcript("I grew up in Maine; my father fished for lobster.",
                      "Summers were spent on the water, winters shovelling snow, then college in Boston.")  # fmt: skip
    step = Interviewer(SCRIPT, by_schema(summary=" ".join(facts))).respond(Position(index=1), "b", 10, said)
    assert step.text == " ".join([*facts[:3], reflecting.CHECK])


def test_an_interview_tells_each_module_back_and_keeps_the_confirmation_and_the_correction(db):
    """Through the turn's owner, as the routes run it: the summary, the person's answer to it and the next
    question are turns of the transcript in order, the position waits across requests, and the correction
    is noted like any answer."""
    services = Services(keys=keyring(), chat=interviewer_model(follow_ups=0, summary=HEARD))
    interview = started(db, services)[1].interview
    script = interviewer_script(db, interview)
    first, second, third = (m.questions[0].text for m in script.modules[:3])
    told = answered(db, services, interview, "I grew up by the sea in Maine; my father fished for a living.", seconds=5)
    assert told.prompt == f"{HEARD} {reflecting.CHECK}"
    db.refresh(interview)
    assert interview.reflecting and interview.question_index == 1
    assert answered(db, services, interview, "Yes, that's right.").prompt == f"{reflecting.CONFIRMED} {second}"
    assert answered(db, services, interview, "I worked at the mill.", seconds=5).prompt == f"{MILL} {reflecting.CHECK}"
    correction = "No, it was the cannery, not the mill."
    assert answered(db, services, interview, correction).prompt == f"{reflecting.CORRECTED} {third}"
    db.refresh(interview)
    assert not interview.reflecting and interview.question_index == 2
    assert interview.seconds_used == {script.modules[0].questions[0].key: 5.0, script.modules[1].questions[0].key: 5.0}

    _, cipher = interviews.cipher_of(db, services, interview)
    said = [(t.speaker, t.text) for t in load_turns(db, interview.transcript_id, cipher)]
    assert [text for _, text in said[1:]] == [
        "I grew up by the sea in Maine; my father fished for a living.", f"{HEARD} {reflecting.CHECK}",
        "Yes, that's right.", f"{reflecting.CONFIRMED} {second}", "I worked at the mill.", f"{MILL} {reflecting.CHECK}",
        correction,
        f"{reflecting.CORRECTED} {third}",
    ]  # fmt: skip
    assert said[0][1].endswith(first)
    assert "Said No,." in replies.position_of(interview, cipher).notes  # the correction, noted


def interviewer_script(db, interview):
    db.refresh(interview)
    return interviews.script_of(interview)
