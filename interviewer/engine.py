"""The interviewer's decision loop: ask the script verbatim, then follow up or move on.

Pure: no database, no clock. The caller passes the position (which question, how much of its time
is used, the running notes) and the turns so far; the engine answers with the next thing to say and
the new position. One chat call per participant answer at most, and none when the question's time
is used up or the participant declined. A model that fails or answers nonsense means "move on": the
interview never stops because of the model. Notes on the person are a second call (``take_notes``),
made off the person's wait.

The decision prompt is laid out for a server that reuses the longest prompt prefix it has cached:
fixed instructions, then a transcript window that slides only now and then, then the few lines that
change every turn (recent notes, the scripted question, time left). Most turns therefore evaluate
only the newest turns and that short tail, and generate a small, bounded JSON answer. The notes call
shares the instructions and the window, so the two calls reuse each other's prefix.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Literal

from agentbank.errors import ProviderError, TruncatedOutputError
from agentbank.providers.chat import ChatModel, Message
from interviewer.decisions import (
    DECISION_MAX_TOKENS,
    DECISION_SCHEMA,
    NOTE_CHARS,
    NOTES_MAX_TOKENS,
    NOTES_SCHEMA,
    read_cut_off,
    read_decision,
    read_notes,
)
from interviewer.repetition import repeats, runs_away
from interviewer.script import Module, Question, Script

MAX_NOTES = 30
NOTES_BUDGET_CHARS = 2000
# The transcript reaches the model as a window that only slides now and then: it grows turn by turn
# until it passes CONTEXT_MAX_CHARS, then its start jumps forward (at a turn boundary) so that about
# CONTEXT_CHARS remain. Between slides each prompt extends the previous one, so a prefix-caching
# server (llama.cpp keeps the last prompt's KV cache) only evaluates the new turns and the short tail.
CONTEXT_CHARS = 5000
CONTEXT_MAX_CHARS = 7000
# The notes sit after the transcript and are evaluated again every turn, so the decision sees only the
# most recent ones; the older ones still live in the position for whatever reads it later.
DECISION_NOTES = 12
DECISION_NOTES_CHARS = 800
# A safety net beside the time budget: a model that always follows up still lets the script advance.
MAX_FOLLOW_UPS = 4
# Declining is honoured without asking the model, so no model can talk someone into answering.
_REFUSAL = re.compile(
    r"\b(rather not|prefer not|don'?t want to (say|answer|talk|discuss|share)|skip( this| that| it)?\b|"
    r"^\s*pass\b|no comment|not comfortable|decline to|none of your business)",
    re.IGNORECASE,
)

logger = logging.getLogger(__name__)

Action = Literal["follow_up", "next", "closing"]


@dataclass(frozen=True)
class Position:
    """Where an interview stands: the scripted question, its follow-ups, time used, running notes."""

    index: int = 0
    follow_ups: int = 0
    seconds_used: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    """What the interviewer says next, why, and the position after saying it."""

    action: Action
    text: str
    position: Position
    reason: Literal["model", "budget", "refusal", "fallback", "limit"]


@dataclass(frozen=True)
class Exchange:
    """One turn as the engine sees it."""

    speaker: str
    text: str


@cache
def _prompt(name: str) -> str:
    return resources.files("interviewer").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8").strip()


def is_refusal(answer: str) -> bool:
    """Whether an answer declines the question (then the interviewer moves on without a follow-up)."""
    return bool(_REFUSAL.search(answer))


def merge_notes(notes: tuple[str, ...], new: list[str]) -> tuple[str, ...]:
    """Running notes plus new facts: each cut to 120 characters, no repeats, the oldest dropped first
    so that at most 30 notes and about 2,000 characters remain."""
    merged = list(notes)
    seen = {n.casefold() for n in merged}
    for raw in new:
        note = " ".join(str(raw).split())
        if len(note) > NOTE_CHARS:
            note = note[: NOTE_CHARS - 1].rstrip() + "…"
        if note and note.casefold() not in seen:
            merged.append(note)
            seen.add(note.casefold())
    while merged and (len(merged) > MAX_NOTES or sum(len(n) + 1 for n in merged) > NOTES_BUDGET_CHARS):
        merged.pop(0)
    return tuple(merged)


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


def _normalized(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.casefold()).strip()


class Interviewer:
    """Runs one script with one chat model."""

    def __init__(self, script: Script, chat: ChatModel, *, seed: int = 0) -> None:
        self.script = script
        self.chat = chat
        self.seed = seed
        self._questions = script.questions()
        self._scripted = {_normalized(q.text) for _, q in self._questions}
        # Everything the script says: a follow-up must never say any of it again.
        self._script_text = [
            *(q.text for _, q in self._questions),
            *re.split(r"(?<=[.!?])\s+", f"{script.opening} {script.closing}"),
        ]

    @property
    def total(self) -> int:
        """How many scripted questions the script has."""
        return len(self._questions)

    def question(self, position: Position) -> tuple[Module, Question] | None:
        """The scripted question being discussed, or None once the script is done."""
        return self._questions[position.index] if position.index < self.total else None

    def opening(self) -> str:
        """The first thing said: the script's opening, then its first question, verbatim."""
        return f"{self.script.opening.strip()}\n\n{self._questions[0][1].text}"

    def module_seconds(self, position: Position) -> dict[str, float]:
        """Seconds used so far in each module, by module key."""
        used: dict[str, float] = {}
        for module, question in self._questions:
            used[module.key] = used.get(module.key, 0.0) + position.seconds_used.get(question.key, 0.0)
        return used

    def respond(self, position: Position, answer: str, seconds: float, turns: list[Exchange]) -> Step:
        """The interviewer's next turn after the participant's ``answer`` that took ``seconds``.

        ``turns`` is the transcript so far, the answer included; only its tail reaches the model.
        """
        current = self.question(position)
        if current is None:
            return Step("closing", self.script.closing.strip(), position, "limit")
        _, question = current
        used = position.seconds_used.get(question.key, 0.0) + max(0.0, seconds)
        position = replace(position, seconds_used={**position.seconds_used, question.key: used})
        if used >= question.seconds:
            return self._advance(position, "budget")
        if is_refusal(answer):
            return self._advance(position, "refusal")
        if position.follow_ups >= MAX_FOLLOW_UPS:
            return self._advance(position, "limit")
        decision = self._decide(position, question, used, turns)
        if decision is None:
            return self._advance(position, "fallback")
        action, follow_up = decision
        if action == "follow_up":
            return Step("follow_up", follow_up, replace(position, follow_ups=position.follow_ups + 1), "model")
        return self._advance(position, "model")

    def take_notes(self, notes: tuple[str, ...], answers: list[str], turns: list[Exchange]) -> tuple[str, ...]:
        """The running ``notes`` with what these ``answers`` revealed about the person (at most two new
        facts), or unchanged when the model fails. ``turns`` is the transcript so far; its tail is shown."""
        user = _prompt("interviewer_notes").format(
            transcript=context_window(turns),
            notes=decision_notes(notes),
            answers="\n".join(f"- {answer}" for answer in answers),
        )
        messages: list[Message] = [
            {"role": "system", "content": _prompt("interviewer_system")},
            {"role": "user", "content": user},
        ]
        try:
            result = self.chat.complete(
                messages, schema=NOTES_SCHEMA, temperature=0.3, max_tokens=NOTES_MAX_TOKENS, seed=self.seed
            )
        except ProviderError as exc:  # a cut-off note is no fact; the code only, as below
            logger.info("interviewer notes not taken (%s)", exc.code)
            return notes
        return merge_notes(notes, read_notes(result.data))

    def _advance(self, position: Position, reason: Literal["model", "budget", "refusal", "fallback", "limit"]) -> Step:
        position = replace(position, index=position.index + 1, follow_ups=0)
        upcoming = self.question(position)
        if upcoming is None:
            return Step("closing", self.script.closing.strip(), position, reason)
        return Step("next", upcoming[1].text, position, reason)

    @staticmethod
    def _asked_about(question: Question, turns: list[Exchange]) -> list[str]:
        """What the interviewer said since it asked ``question``: the question and its follow-ups.

        A general follow-up ("Can you give me an example?") may come back under another question;
        under the same one it is a repeat.
        """
        said = [t.text for t in turns if t.speaker == "interviewer"]
        start = max((i for i, text in enumerate(said) if question.text in text), default=0)
        return said[start:]

    def _decide(
        self, position: Position, question: Question, used: float, turns: list[Exchange]
    ) -> tuple[str, str] | None:
        """The model's choice (action, follow-up), or None when it failed or said something unusable."""
        # The order is the point: the fixed instructions and the slowly sliding transcript come first
        # and form a prefix the server has already evaluated; only what follows changes every turn.
        user = _prompt("interviewer_turn").format(
            transcript=context_window(turns),
            notes=decision_notes(position.notes),
            question=question.text,
            follow_ups=position.follow_ups,
            seconds_left=max(0, round(question.seconds - used)),
        )
        messages: list[Message] = [
            {"role": "system", "content": _prompt("interviewer_system")},
            {"role": "user", "content": user},
        ]
        try:
            result = self.chat.complete(
                messages,
                schema=DECISION_SCHEMA,
                temperature=0.7,
                max_tokens=DECISION_MAX_TOKENS,
                seed=self.seed + position.index,
            )
            data = read_decision(result.data)
        except TruncatedOutputError as exc:
            # A small model running away (digits, repeats) after the question: what it wrote still counts.
            data = read_cut_off(exc.partial)
            logger.info("interviewer decision cut off at the token cap; %s", "its start used" if data else "moving on")
        except ProviderError as exc:
            # The code only: the message of a provider error may quote the prompt.
            logger.warning("interviewer model failed (%s); moving on", exc.code)
            return None
        action, follow_up = data.get("action"), " ".join(str(data.get("question", "")).split())
        asked_before = self._asked_about(question, turns)
        if action == "follow_up" and (repeats(follow_up, [*self._script_text, *asked_before]) or runs_away(follow_up)):
            # An empty follow-up, a scripted question or sentence, a question asked before (even with a
            # word changed) or a model running on in its question is no follow-up at all: it is caught
            # here, before anyone hears it.
            logger.info("interviewer follow-up repeated what was said or ran away; moving on")
            return "next", ""
        if action not in ("follow_up", "next"):
            return None
        return action, follow_up
