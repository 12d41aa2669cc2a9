"""The moderator: an LLM following the team's guide, deciding who speaks next and what is said to them.

Its choice is made with a JSON schema whose every field is an enum of what the guide allows at this point:
the current question to a seat that has not answered it yet (or the next question once all have), one of
the guide's probes to a seat about an earlier utterance (by its number), or closing once the guide is
covered. So the moderator's words are always the guide's wording: nothing it says quotes or paraphrases a
participant, and its turns can be stored plain, beside the seats they name, and outlive any withdrawal.
It reads the discussion so far (the agents' released words, the silences) to choose, in memory only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentbank.core.prompts.files import prompt
from agentbank.providers.chat import ChatModel, ChatRequest, Message
from agentbank.restricted.groups.storage import GroupState, Spoken, label

NO_UTTERANCE = -1  # ``about`` of a turn that follows nothing up
SHOWN_TURNS = 30  # the latest turns the moderator reads before choosing
MAX_TOKENS = 120


@dataclass(frozen=True)
class Options:
    """What the guide allows next: the actions, the question (its ref and round), the seats for it, the
    utterances a probe may follow up; ``seats`` lists every seat the moderator may name, fairest first."""

    actions: tuple[str, ...]
    question: str | None
    round: int
    for_question: tuple[int, ...]
    seats: tuple[int, ...]
    probes: tuple[str, ...]
    about: tuple[int, ...]


def options(state: GroupState) -> Options | None:
    """The moderator's options now; None when the group must close (guide covered, budget spent)."""
    guide = state.request.guide
    if state.agent_turns >= guide.max_turns or len(state.active) < 2:
        return None
    questions = guide.questions()
    asked = [s for s in state.spoken if s.kind == "moderator" and s.action == "question"]
    current = max((s.round for s in asked), default=0)
    addressed = {s.seat for s in asked if s.round == current}
    waiting = tuple(seat for seat in state.active if seat not in addressed)
    if current and waiting:
        question, round_, for_question = questions[current - 1][0], current, waiting
    elif current < len(questions):
        question, round_, for_question = questions[current][0], current + 1, tuple(state.active)
    else:
        question, round_, for_question = None, current, ()
    probed = sum(s.kind == "moderator" and s.action == "probe" and s.round == current for s in state.spoken)
    about = tuple(
        s.number
        for s in reversed(state.spoken)
        if s.round == current and s.kind == "agent" and s.readable and s.seat in state.active
    )
    probes = tuple(ref for ref, _ in guide.probe_refs()) if about and probed < guide.probes_per_question else ()
    actions = (*(("question",) if question else ()), *(("probe",) if probes else ()), *(() if question else ("close",)))
    if actions == ("close",):
        return None
    spoke = {s.seat: s.number for s in state.spoken if s.kind in ("agent", "silence")}
    fair = sorted(state.active, key=lambda seat: (seat not in for_question, spoke.get(seat, -1), seat))
    return Options(actions, question, round_, for_question, tuple(fair), probes, about or (NO_UTTERANCE,))


def schema(choice: Options) -> dict[str, Any]:
    """The decision's JSON schema: every field an enum of what the guide allows now."""
    refs = [*([choice.question] if choice.question else []), *choice.probes] or ["none"]
    properties = {
        "action": {"type": "string", "enum": list(choice.actions)},
        "seat": {"type": "string", "enum": [label(s) for s in choice.seats]},
        "guide_ref": {"type": "string", "enum": refs},
        "about": {"type": "integer", "enum": list(choice.about)},
    }
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def line(turn: Spoken) -> str | None:
    """A turn as the discussion reads it (None for an agent's words no longer readable)."""
    if turn.kind == "moderator":
        to = f" to {label(turn.seat)}" if turn.seat else ""
        return f"[{turn.number}] Moderator{to}: {turn.text}"
    if turn.kind == "silence":
        return f"[{turn.number}] {label(turn.seat or 0)} stays silent."
    if turn.kind == "left":
        return f"[{turn.number}] {label(turn.seat or 0)} has left the group."
    return f"[{turn.number}] {label(turn.seat or 0)}: {turn.text}" if turn.readable else None


def messages(state: GroupState, choice: Options) -> list[Message]:
    """The moderator's prompt: its instructions, the guide and the stimulus (the same at every turn), then the
    latest turns and what it may choose now."""
    guide, stimulus = state.request.guide, state.request.stimulus
    lines = [prompt("group_moderator"), "", f"Stimulus ({stimulus.kind}): {stimulus.text}", "", "Guide:"]
    lines += [f"- {ref}: {text}" for ref, text in guide.questions()]
    lines += ["Probes:", *[f"- {ref}: {text}" for ref, text in guide.probe_refs()]]
    shown = [text for turn in state.spoken[-SHOWN_TURNS:] if (text := line(turn)) is not None]
    now = [
        f"Seats in the group: {', '.join(label(s) for s in state.active)}.",
        f"Question now: {choice.question or 'none left'}; seats yet to answer it: "
        f"{', '.join(label(s) for s in choice.for_question) or 'none'}.",
        f"Allowed: {', '.join(choice.actions)}. A probe follows up one utterance by its number.",
    ]
    user = "The discussion so far:\n" + "\n".join(shown) + "\n\n" + "\n".join(now)
    return [{"role": "system", "content": "\n".join(lines)}, {"role": "user", "content": user}]


def request(state: GroupState, choice: Options) -> ChatRequest:
    """The moderator's call."""
    return ChatRequest(messages(state, choice), schema(choice), temperature=0.0, max_tokens=MAX_TOKENS, seed=0)


def decide(chat: ChatModel, state: GroupState, choice: Options, number: int) -> Spoken:
    """Ask the moderator (no transaction open) and hold its choice to the guide: a question goes to a seat
    yet to answer it, a probe about an utterance of this round. Returns the turn to store."""
    result = chat.complete(request(state, choice))
    data = result.data
    seat = int(str(data["seat"]).removeprefix("Seat "))
    action = data["action"] if data["action"] in choice.actions else choice.actions[0]
    guide = state.request.guide
    if action == "question":
        seat = seat if seat in choice.for_question else choice.for_question[0]
        ref, about = choice.question, None
    else:  # a probe
        ref = data["guide_ref"] if data["guide_ref"] in choice.probes else choice.probes[0]
        about = data["about"] if data["about"] in choice.about else choice.about[0]
    assert ref is not None
    return Spoken(
        number, choice.round, "moderator", seat, None, action, ref, about, guide.text_of(ref), usage=result.usage
    )


def opening(state: GroupState) -> Spoken:
    """The moderator's first words (no call): the guide's opening and the stimulus."""
    stimulus = state.request.stimulus
    text = f"{state.request.guide.opening} Today we discuss this {stimulus.kind.replace('_', ' ')}: {stimulus.text}"
    return Spoken(0, 0, "moderator", None, None, "open", None, None, text)


def closing(state: GroupState, number: int) -> Spoken:
    """The moderator's last words (no call): the guide's closing."""
    return Spoken(
        number,
        max((s.round for s in state.spoken), default=0),
        "moderator",
        None,
        None,
        "close",
        None,
        None,
        state.request.guide.closing,
    )
