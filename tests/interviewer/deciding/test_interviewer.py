"""The interviewer's decisions and notes with a scripted model: budgets, context, refusals, failures."""

import json
from dataclasses import replace
from hashlib import sha256

import pytest

from agentbank.core.errors import ProviderError, TruncatedOutputError
from agentbank.providers.fakes import ScriptedChatModel
from interviewer.deciding.decisions import DECISION_MAX_TOKENS, NEW_NOTES, NOTE_CHARS, NOTES_MAX_TOKENS, QUESTION_CHARS
from interviewer.deciding.interviewer import Exchange, Interviewer, Position, merge_notes
from interviewer.deciding.model_prompts import (
    CONTEXT_CHARS,
    CONTEXT_MAX_CHARS,
    DECISION_NOTES,
    DECISION_NOTES_CHARS,
    context_window,
    window_start,
)
from interviewer.session.script import load_script, shorten

SCRIPT = shorten(load_script(), modules=2, seconds=60)


def follow(question="Where was that?"):
    return {"decision": {"action": "follow_up", "question": question}}


NEXT = {"decision": {"action": "next"}}


def test_opening_then_the_first_question_verbatim():
    engine = Interviewer(SCRIPT, ScriptedChatModel([]))
    assert engine.opening().startswith(SCRIPT.opening.strip())
    assert engine.opening().endswith(SCRIPT.modules[0].questions[0].text)


def test_follow_up_then_next_within_the_budget():
    chat = ScriptedChatModel([follow(), NEXT])
    engine = Interviewer(SCRIPT, chat)
    step = engine.respond(Position(), "I grew up in Ohio.", 10, [Exchange("participant", "I grew up in Ohio.")])
    assert (step.action, step.text, step.position.follow_ups) == ("follow_up", "Where was that?", 1)
    step = engine.respond(step.position, "Columbus.", 5, [])
    assert step.action == "next" and step.text == SCRIPT.modules[1].questions[0].text
    assert step.position.index == 1 and step.position.follow_ups == 0
    assert engine.module_seconds(step.position)[SCRIPT.modules[0].key] == 15


def test_no_model_call_once_the_budget_is_used():
    chat = ScriptedChatModel([follow()])
    engine = Interviewer(SCRIPT, chat)
    step = engine.respond(Position(), "A very long answer.", 61, [])
    assert step.action == "next" and step.reason == "budget" and chat.calls == []


def test_refusal_moves_on_without_a_follow_up():
    chat = ScriptedChatModel([follow()])
    step = Interviewer(SCRIPT, chat).respond(Position(), "I'd rather not say.", 2, [])
    assert step.action == "next" and step.reason == "refusal" and chat.calls == []


def test_model_failure_or_nonsense_moves_on():
    for reply in (ProviderError("down"), "not json", follow(question=SCRIPT.modules[1].questions[0].text)):
        step = Interviewer(SCRIPT, ScriptedChatModel([reply])).respond(Position(), "Fine.", 1, [])
        assert step.action == "next"


def test_the_last_answer_gets_the_closing():
    engine = Interviewer(SCRIPT, ScriptedChatModel([NEXT]))
    step = engine.respond(Position(index=1), "That's all.", 3, [])
    assert step.action == "closing" and step.text == SCRIPT.closing.strip() and engine.question(step.position) is None


def test_notes_stay_short_and_bounded():
    notes = merge_notes((), ["x" * 500] + [f"fact {n} " + "y" * 100 for n in range(40)])
    assert all(len(n) <= NOTE_CHARS for n in notes)
    assert len(notes) <= 30 and sum(len(n) for n in notes) <= 2000
    assert notes[-1].startswith("fact 39")


def test_the_model_sees_only_the_tail_of_the_transcript():
    turns = [Exchange("participant" if n % 2 else "interviewer", f"turn {n} " + "z" * 300) for n in range(100)]
    window = context_window(turns)
    assert len(window) <= CONTEXT_MAX_CHARS and "turn 99" in window and "turn 0 " not in window
    chat = ScriptedChatModel([follow()])
    Interviewer(SCRIPT, chat).respond(Position(), "Fine.", 1, [*turns, Exchange("participant", "Fine.")])
    prompt = chat.calls[0]["messages"][1]["content"]
    assert "turn 99" in prompt and "turn 10 " not in prompt and len(prompt) < CONTEXT_MAX_CHARS + 1500
    assert prompt.count("Fine.") == 1  # the answer is shown once, after the transcript
    shapes = chat.calls[0]["schema"]["properties"]["decision"]["anyOf"]
    assert [shape["properties"]["action"]["enum"] for shape in shapes] == [["follow_up"], ["next"]]


def test_the_window_slides_in_steps_and_stays_bounded():
    turns = [
        Exchange("participant" if n % 2 else "interviewer", f"turn {n} " + "z" * (50 + 37 * (n % 11)))
        for n in range(300)
    ]
    lengths = [
        len(f"Participant: {t.text}") if t.speaker == "participant" else len(f"Interviewer: {t.text}") for t in turns
    ]
    starts = [window_start(lengths[: n + 1]) for n in range(len(turns))]
    slides = 0
    for n in range(1, len(turns)):
        window = context_window(turns[: n + 1])
        assert len(window) <= CONTEXT_MAX_CHARS and window.endswith(turns[n].text)
        assert starts[n] >= starts[n - 1]
        if starts[n] != starts[n - 1]:
            slides += 1
            assert len(window) <= CONTEXT_CHARS  # a slide cuts back to the smaller size
    assert 0 < slides < len(turns) / 4  # most turns only append


def test_one_very_long_turn_is_cut_to_its_tail():
    window = context_window([Exchange("interviewer", "Hello."), Exchange("participant", "w" * 20_000 + " end")])
    assert len(window) == CONTEXT_CHARS and window.endswith(" end")


def test_each_prompt_extends_the_previous_one_up_to_the_transcript():
    """Between slides of the window, a prefix cache only has to evaluate the new turns and the tail."""
    # Follow-ups unlike each other (the engine drops one that repeats an earlier one).
    chat = ScriptedChatModel(
        lambda messages, schema: follow(question=f"And {sha256(messages[1]['content'].encode()).hexdigest()[:24]}?")
    )
    engine = Interviewer(shorten(load_script(), modules=1, seconds=100_000), chat)
    position, turns = Position(), [Exchange("interviewer", engine.opening())]
    windows = []
    for n in range(40):
        answer = f"Answer {n}: " + "we moved house again that year " * (3 + n % 7)
        windows.append(context_window(turns))  # the transcript before the answer, which is shown apart
        turns.append(Exchange("participant", answer))
        step = engine.respond(replace(position, follow_ups=0), answer, 1, turns)
        position = step.position
        turns.append(Exchange("interviewer", step.text))
    prompts = [call["messages"] for call in chat.calls]
    extended = 0
    for n in range(1, len(prompts)):
        assert prompts[n][0] == prompts[n - 1][0]  # the instructions never change
        previous, current = prompts[n - 1][1]["content"], prompts[n][1]["content"]
        head = previous[: previous.index(windows[n - 1]) + len(windows[n - 1])]
        if windows[n].startswith(windows[n - 1]):  # no slide between these turns
            assert current.startswith(head)
            extended += 1
        else:
            assert not current.startswith(head)
    assert 30 <= extended < len(prompts) - 1  # the window did slide, and most turns were extensions


class Recording(ScriptedChatModel):
    def complete(self, request):
        self.options = {"temperature": request.temperature, "max_tokens": request.max_tokens, "seed": request.seed,
                        "frequency_penalty": request.frequency_penalty, "schema": request.schema}  # fmt: skip
        return super().complete(request)


def test_the_decision_sees_only_recent_notes_and_writes_only_its_choice():
    """Everything the decision generates is waited for: its action and a follow-up's question, no notes."""
    notes = tuple(f"Fact number {n} about the person, " + "q" * 60 for n in range(30))
    chat = Recording([follow()])
    step = Interviewer(SCRIPT, chat).respond(Position(notes=notes), "Fine.", 1, [Exchange("participant", "Fine.")])
    prompt = chat.calls[0]["messages"][1]["content"]
    shown = [n for n in notes if n in prompt]
    assert shown == list(notes[-len(shown) :]) and 0 < len(shown) <= DECISION_NOTES
    assert sum(len(n) + 3 for n in shown) <= DECISION_NOTES_CHARS
    # The notes come after the transcript and before the answer, which comes last but for the instructions.
    assert prompt.index("Fine.") > prompt.index(shown[-1])
    schema = chat.calls[0]["schema"]
    follow_up, move_on = schema["properties"]["decision"]["anyOf"]
    # The action is decoded first, and a "next" writes no question.
    assert list(follow_up["properties"]) == ["action", "question"] and list(move_on["properties"]) == ["action"]
    assert chat.options["max_tokens"] <= 120
    assert step.position.notes == notes  # a decision never changes the notes


def test_notes_are_a_call_of_their_own_that_shares_the_decisions_prefix():
    turns = [Exchange("interviewer", "Where did you grow up?"), Exchange("participant", "In Ohio, two sons later.")]
    chat = Recording([follow(), {"notes": ["Grew up in Ohio.", "Has two sons."]}])
    engine = Interviewer(SCRIPT, chat)
    engine.respond(Position(notes=("Likes gardens.",)), turns[-1].text, 1, turns)
    notes = engine.take_notes(("Likes gardens.",), [turns[-1].text], turns)
    assert notes == ("Likes gardens.", "Grew up in Ohio.", "Has two sons.")
    decision, taking = (call["messages"] for call in chat.calls)
    assert decision[0] == taking[0]  # the same instructions
    shared = decision[1]["content"][: decision[1]["content"].index(turns[0].text) + len(turns[0].text)]
    assert taking[1]["content"].startswith(shared)  # and the same transcript: a prefix cache serves both
    assert chat.calls[1]["schema"]["properties"]["notes"]["maxItems"] == NEW_NOTES
    # A failing model leaves the notes as they were.
    assert Interviewer(SCRIPT, ScriptedChatModel([ProviderError("down")])).take_notes(notes, ["x"], turns) == notes


@pytest.mark.parametrize(
    "follow_up",
    [
        # the question again, one word changed
        "To start, could you walk me through your life so far, from your youth up to today, including your "
        "schooling, your family, the relationships that mattered and any big events along the way?",
        "You can pause at any time and come back later.",  # a clause of the opening
        "Whenever you are ready, we can begin.",  # a sentence of the opening
        "Could you tell me more (1)?",  # asked before, in this interview
        # a small model running on inside its question until the schema's length cut it (seen on SmolLM2)
        "...I'm going to continue the story. I'm going to continue the story. I'm going to continue the st",
        "That must have been hard.",  # no question at all
        "Why? And where? And with whom?",  # more than one question
    ],
)
def test_a_follow_up_that_repeats_is_never_asked(follow_up):

    script = load_script()
    chat = ScriptedChatModel(lambda _m, _s: follow(follow_up))
    engine = Interviewer(script, chat)
    turns = [Exchange("interviewer", engine.opening()), Exchange("participant", "I grew up by the sea."),
             Exchange("interviewer", "Could you tell me more (1)?"), Exchange("participant", "We fished.")]  # fmt: skip
    step = engine.respond(Position(0), "We fished.", 5.0, turns)
    assert step.action == "next" and step.text == script.questions()[1][1].text


def test_a_new_follow_up_is_asked():

    chat = ScriptedChatModel(lambda _m, _s: follow("What did your brother do after the war?"))
    engine = Interviewer(load_script(), chat)
    turns = [Exchange("interviewer", engine.opening()), Exchange("participant", "My brother came home in 1946.")]
    assert engine.respond(Position(0), "My brother came home in 1946.", 5.0, turns).action == "follow_up"


def test_no_decision_the_schema_allows_is_cut_off():
    """The longest decision the schema allows fits under the token cap, at three characters a token
    (English prose runs at about four): a cut-off decision is thrown away after the whole wait."""
    longest = {
        "decision": {
            "action": "follow_up",
            "question": ("Why " * QUESTION_CHARS)[:QUESTION_CHARS],
        }
    }
    assert len(json.dumps(longest, separators=(",", ":"))) / 3 <= DECISION_MAX_TOKENS
    most_notes = {"notes": [("Has a son. " * NOTE_CHARS)[:NOTE_CHARS]] * NEW_NOTES}
    assert len(json.dumps(most_notes, separators=(",", ":"))) / 3 <= NOTES_MAX_TOKENS


@pytest.mark.parametrize(
    ("partial", "expected"),
    [
        # cut off in what a running-away model wrote after it: the follow-up was written whole and is asked
        ('{"decision": {"action": "follow_up", "question": "Where was that?"            \n\n\n\n',
         ("follow_up", "Where was that?", "model")),
        ('{"decision":{"action":"next"                         ', ("next", None, "model")),
        # cut off inside the question: nothing to ask, the script moves on
        ('{"decision": {"action": "follow_up", "question": "Where was th', ("next", None, "fallback")),
        ('{"decisi', ("next", None, "fallback")),
    ],
)  # fmt: skip
def test_a_decision_cut_off_after_its_question_still_counts(partial, expected):
    chat = ScriptedChatModel([TruncatedOutputError("cut off", partial=partial)])
    step = Interviewer(SCRIPT, chat).respond(Position(), "I grew up in Ohio.", 10, [])
    action, text, reason = expected
    assert (step.action, step.reason) == (action, reason)
    assert text is None or step.text == text
    assert step.position.notes == ()


def test_the_answer_so_far_is_the_start_of_the_decisions_prompt():
    """Sent while the person speaks, it leaves in the model's cache all the decision starts with."""
    opening = Exchange("interviewer", SCRIPT.modules[0].questions[0].text)
    spoken, answer = "I grew up by the sea,", "I grew up by the sea, in a fishing town."
    chat = Recording([follow()])
    engine = Interviewer(SCRIPT, chat)
    position = Position(notes=("Likes gardens.",))
    ahead = engine.answer_so_far(position, [opening, Exchange("participant", spoken)], spoken)
    engine.respond(position, answer, 5, [opening, Exchange("participant", answer)])
    decided = chat.calls[0]["messages"]
    assert ahead is not None and ahead[0] == decided[0]
    assert ahead[1]["content"].endswith(spoken) and decided[1]["content"].startswith(ahead[1]["content"])
    assert engine.answer_so_far(Position(index=engine.total), [opening], spoken) is None  # the script is done


def test_a_stored_snapshot_is_prepared_once_and_each_caller_keeps_its_own_model():
    snapshot = SCRIPT.model_dump(mode="json")
    first, second = ScriptedChatModel([NEXT]), ScriptedChatModel([follow()])
    one, two = (
        Interviewer.of_snapshot(snapshot, first),
        Interviewer.of_snapshot(json.loads(json.dumps(snapshot)), second),
    )
    assert one.questions is two.questions  # parsed and worked out once for the same snapshot
    assert one.chat is first and two.chat is second
    assert (
        one.questions == Interviewer(SCRIPT, first).questions and one.opening() == Interviewer(SCRIPT, first).opening()
    )
    changed = json.loads(json.dumps(snapshot))
    changed["modules"][0]["questions"][0]["text"] = "Where were you born, and who was there?"
    other = Interviewer.of_snapshot(changed, first)
    assert other.questions is not one.questions
    assert other.opening().endswith("Where were you born, and who was there?")
