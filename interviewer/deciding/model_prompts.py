"""What the interviewer's model is shown: the transcript window, the notes, and the prompts built
from them (the decision, the answer so far that warms the model's cache, the notes, and the summary told
back at the end of a module).

Every prompt is laid out for a server that reuses the longest prompt prefix it has cached: the fixed
instructions, then a transcript window that slides only now and then, then what changes every
question (recent notes, the scripted question), then the person's answer, and last the few words that
change every turn (time left, what to write). While the person speaks, the prompt up to their answer
so far is sent ahead (``answer_so_far``), so that at the end of the turn the model has only the last
words and the short tail left to read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

from agentbank.providers.chat import Message

# The transcript reaches the model as a window that only slides now and then: it grows turn by turn
# until it passes CONTEXT_MAX_CHARS, then its start jumps forward (at a turn boundary) so that about
# CONTEXT_CHARS remain. Between slides each prompt extends the previous one, so a prefix-caching
# server (llama.cpp keeps the last prompt's KV cache) only evaluates the new turns and the short tail.
CONTEXT_CHARS = 5000
CONTEXT_MAX_CHARS = 7000
# The notes sit after the transcript and are evaluated again every question, so the decision sees only
# the most recent ones; the older ones still live in the position for whatever reads it later.
DECISION_NOTES = 12
DECISION_NOTES_CHARS = 800


@dataclass(frozen=True)
class Exchange:
    """One turn as the engine sees it."""

    speaker: str
    text: str


@cache
def _prompt(name: str) -> str:
    return (
        resources.files("interviewer.deciding").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8").strip()
    )


def _line(turn: Exchange) -> str:
    return f"{'Interviewer' if turn.speaker == 'interviewer' else 'Participant'}: {turn.text}"


def window_start(lengths: list[int], keep: int = CONTEXT_CHARS, limit: int = CONTEXT_MAX_CHARS) -> int:
    """The index of the first transcript line the model sees, given every line's length.

    Replays the interview line by line: the window grows until it passes ``limit`` characters, then
    its start moves forward whole lines until at most ``keep`` remain (the last line always stays).
    A function of the lines alone, so every call on the same transcript agrees and the engine needs
    no memory between turns.
    """
    start, size = 0, -1  # size: characters of lines[start:end + 1] joined by newlines
    for end, length in enumerate(lengths):
        size += length + 1
        if size > limit:
            while start < end and size > keep:
                size -= lengths[start] + 1
                start += 1
    return start


def context_window(turns: list[Exchange], keep: int = CONTEXT_CHARS, limit: int = CONTEXT_MAX_CHARS) -> str:
    """The tail of the transcript the model sees: at most ``limit`` characters, cut at turn boundaries.

    The window's start stays put while it grows and jumps forward only once it passes ``limit``, so
    consecutive calls usually see one window extended by the newest turns (see ``window_start``).
    A single turn longer than ``limit`` is cut to its last ``keep`` characters.
    """
    lines = [_line(turn) for turn in turns]
    text = "\n".join(lines[window_start([len(line) for line in lines], keep, limit) :])
    return text[-keep:] if len(text) > limit else text


def decision_notes(notes: tuple[str, ...], count: int = DECISION_NOTES, chars: int = DECISION_NOTES_CHARS) -> str:
    """The most recent notes, at most ``count`` of them and about ``chars`` characters, as a list."""
    shown: list[str] = []
    total = 0
    for note in reversed(notes[-count:] if count else ()):
        if total + len(note) + 3 > chars:
            break
        shown.append(f"- {note}")
        total += len(note) + 3
    return "\n".join(reversed(shown)) or "(nothing yet)"


def _messages(user: str) -> list[Message]:
    return [{"role": "system", "content": _prompt("interviewer_system")}, {"role": "user", "content": user}]


def _before_answer(turns: list[Exchange], notes: tuple[str, ...], question: str, follow_ups: int) -> str:
    """The decision prompt up to the person's answer: the same for every word of the answer."""
    head, _, _ = _prompt("interviewer_turn").partition("{answer}")
    shown = turns[:-1] if turns and turns[-1].speaker == "participant" else turns
    return head.format(
        transcript=context_window(shown), notes=decision_notes(notes), question=question, follow_ups=follow_ups
    )


def decision_prompt(turns: list[Exchange], notes: tuple[str, ...], question: str, follow_ups: int, answer: str,
             seconds_left: int) -> list[Message]:  # fmt: skip
    """The decision's prompt after ``answer`` (``turns`` is the transcript, ending with the answer or not)."""
    _, _, tail = _prompt("interviewer_turn").partition("{answer}")
    before = _before_answer(turns, notes, question, follow_ups)
    return _messages(before + answer + tail.format(seconds_left=seconds_left))


def answer_so_far(turns: list[Exchange], notes: tuple[str, ...], question: str, follow_ups: int,
                  spoken: str) -> list[Message]:  # fmt: skip
    """The decision's prompt cut after what the person has said so far: sent while they speak, it leaves
    the model's cache holding everything the decision will start with."""
    return _messages(_before_answer(turns, notes, question, follow_ups) + spoken)


def notes_prompt(turns: list[Exchange], notes: tuple[str, ...], answers: list[str]) -> list[Message]:
    """The notes call's prompt: the same instructions and window as the decision, then the answers to note."""
    user = _prompt("interviewer_notes").format(
        transcript=context_window(turns), notes=decision_notes(notes), answers="\n".join(f"- {a}" for a in answers)
    )
    return _messages(user)


def reflect_prompt(module: str, answers: list[str]) -> list[Message]:
    """The summary's prompt at the end of ``module``: the person's answers in it, to be told back."""
    user = _prompt("interviewer_reflect").format(module=module, answers="\n".join(f"- {a}" for a in answers))
    return _messages(user)
